import path from "node:path";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The Worker in workerd against the shared test database, with the rollups switched on or off. */
function workerProject(name: string, include: string[], rollups: "on" | "off") {
  return {
    plugins: [
      cloudflareTest(({ inject }) => ({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            DATABASE_URL: inject("databaseUrl"),
            NEON_WS_PROXY: inject("relayProxy"),
            RATE_LIMIT_PER_10S: "0",
            ROLLUPS: rollups,
          },
        },
      })),
    ],
    test: { name, include, testTimeout: 30_000 },
  };
}

/**
 * Two tiers share one freshly migrated database (test/support/global-setup.ts):
 * - http: the Worker in workerd (miniflare), called through its fetch handler (http-exact: the
 *   insights files again with the rollups off, so both query paths meet the same reference);
 * - node: query builders and SQL routines against the same Postgres through the same driver.
 */
export default defineConfig({
  root,
  test: {
    globalSetup: ["./test/support/global-setup.ts"],
    projects: [
      workerProject("http", ["test/http/**/*.test.ts"], "on"),
      // The insights differential tests again, on the exact path (rollups switched off).
      workerProject("http-exact", ["test/http/insights*.test.ts"], "off"),
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          setupFiles: ["./test/support/node/setup.ts"],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
