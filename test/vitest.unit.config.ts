import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The unit tier: the pure modules (range, timezone, filter parser, cursors, decimals, chart
 * summaries and shaping, export formats, isolate caches) in Node, with no database and no workerd.
 * `npm run test:unit` runs it alone in seconds; `npm test` runs it with the other tiers.
 */
export const unitProject = {
  test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" },
};

export default defineConfig({ root, test: { projects: [unitProject] } });
