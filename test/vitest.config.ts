import path from "node:path";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Two tiers share one freshly migrated database (test/support/global-setup.ts):
 * - http: the Worker in workerd (miniflare), called through its fetch handler;
 * - node: query builders and SQL routines against the same Postgres through the same driver.
 */
export default defineConfig({
  root,
  test: {
    globalSetup: ["./test/support/global-setup.ts"],
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                DATABASE_URL: inject("databaseUrl"),
                NEON_WS_PROXY: inject("relayProxy"),
                RATE_LIMIT_PER_10S: "0",
              },
            },
          })),
        ],
        test: { name: "http", include: ["test/http/**/*.test.ts"], testTimeout: 30_000 },
      },
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
