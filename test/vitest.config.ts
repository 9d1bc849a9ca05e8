import path from "node:path";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { unitProject } from "./vitest.unit.config.ts";

const TIMEOUT_TESTS = "test/http/statement-timeout.test.ts";

/**
 * Limits, not expectations: a node test that trickles events through many refreshes took 35–50 s
 * on a slow day of the CI machine (its CPU at half speed), and two passed 60 s. No test asserts a
 * time; these only stop a test that hangs.
 */
const TEST_TIMEOUT_MS = 240_000;
const HOOK_TIMEOUT_MS = 300_000;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The Worker in workerd against the shared test database, with some of its vars overridden. */
function workerProject(
  name: string,
  include: string[],
  vars: { ROLLUPS?: "on" | "off"; STATEMENT_TIMEOUT_MS?: string } = {},
  exclude: string[] = [],
) {
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
            ...vars,
          },
        },
      })),
    ],
    // Hooks load data and refresh the derived tables: on a busy machine that outlasts vitest's 10 s.
    test: { name, include, exclude, testTimeout: TEST_TIMEOUT_MS, hookTimeout: HOOK_TIMEOUT_MS },
  };
}

/**
 * The unit tier (test/vitest.unit.config.ts: pure modules, no database), and two tiers that share
 * one freshly migrated database (test/support/global-setup.ts):
 * - http: the Worker in workerd (miniflare), called through its fetch handler (http-exact: the
 *   insights files again with the rollups off, so both query paths meet the same reference);
 * - node: query builders and SQL routines against the same Postgres through the same driver.
 */
export default defineConfig({
  root,
  test: {
    globalSetup: ["./test/support/global-setup.ts"],
    // The Worker logs one JSON line per request (src/middleware/request-log.ts): thousands in a
    // run. test/http/observability.test.ts reads them through a spy; the output leaves them out.
    onConsoleLog: (log) => !log.startsWith('{"event":"request"'),
    projects: [
      unitProject,
      workerProject("http", ["test/http/**/*.test.ts"], {}, [TIMEOUT_TESTS]),
      // The insights and chart differential tests again, on the exact path (rollups switched off).
      workerProject("http-exact", ["test/http/insights*.test.ts", "test/http/export-charts.test.ts"], {
        ROLLUPS: "off",
      }),
      // A statement timeout short enough for a heavy query to hit it.
      workerProject("http-timeout", [TIMEOUT_TESTS], { STATEMENT_TIMEOUT_MS: "150" }),
      // End to end against `wrangler dev` on a seeded database of its own: the reference dashboard
      // in headless Chromium, and the README's examples in sh.
      {
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["./test/support/browser/global-setup.ts"],
          environment: "node",
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: HOOK_TIMEOUT_MS,
        },
      },
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          setupFiles: ["./test/support/node/setup.ts"],
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: HOOK_TIMEOUT_MS,
        },
      },
    ],
  },
});
