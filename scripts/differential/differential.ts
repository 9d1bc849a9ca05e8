/**
 * `npm run differential`: seeded random filtered read requests (requests.ts) sent to two Workers
 * under `wrangler dev` over one seeded database, one with the pre-aggregated paths (the default)
 * and one with `ROLLUPS=off` (the exact path), and their answers compared. The differential tests
 * hold every operator and combination kind on fixed fixtures; this draws thousands of shapes
 * (filters of every operator on every dimension, page and event-name filters, windows, timezones,
 * chart intervals, segments and breakdowns) on demo traffic and lists every request whose two
 * answers differ beyond what the contract allows (visitors from sketches within ±2 %, named in
 * `meta.approximate`). Exits 1 if any does.
 *
 *   npm run differential -- [--events 60000] [--days 45] [--requests 2000] [--seed 1]
 *     [--concurrency 4] [--out scripts/differential/REPORT.md]
 *
 * environment: TEST_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { startBenchServer } from "../bench/server";
import { migrateDatabase } from "../db/apply-migrations";
import { createScratchDatabase } from "../db/scratch-database";
import { DEMO_READ_CLIENT } from "../seed/demo-fixtures";
import { seedDatabase } from "../seed/loader";
import { answerDifferences, countsSomething } from "./compare";
import {
  type DifferentialRequest,
  differentialRequest,
  FILTERED_COLUMNS,
  type FilteredColumn,
} from "./requests";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "60000" },
    days: { type: "string", default: "45" },
    requests: { type: "string", default: "2000" },
    seed: { type: "string", default: "1" },
    concurrency: { type: "string", default: "4" },
    out: { type: "string", default: "scripts/differential/REPORT.md" },
    // The project's own zone (the demo's is UTC): the per-day rows are built in it and answer
    // requests in it, so another zone sends other requests down those paths.
    "project-timezone": { type: "string" },
  },
});
const REQUESTS = Number(values.requests);
const SEED = Number(values.seed);
const CONCURRENCY = Number(values.concurrency);
const PROJECT = DEMO_READ_CLIENT.projectId ?? "demo";
/** How many of a column's most frequent values the filters draw from. */
const POOL_SIZE = 12;
const DAY_MS = 86_400_000;

/** Per filtered column, its most frequent values among the project's events. */
async function valuePools(db: pg.Client): Promise<Map<FilteredColumn, string[]>> {
  const pools = new Map<FilteredColumn, string[]>();
  for (const column of FILTERED_COLUMNS) {
    const { rows } = await db.query<{ value: string }>(
      `SELECT ${pg.escapeIdentifier(column)} AS value FROM events
        WHERE project_id = $1 AND ${pg.escapeIdentifier(column)} <> ''
        GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT ${POOL_SIZE}`,
      [PROJECT],
    );
    pools.set(
      column,
      rows.map((row) => row.value),
    );
  }
  return pools;
}

interface Mismatch {
  index: number;
  request: DifferentialRequest;
  differences: string[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const scratch = await createScratchDatabase("differential");
  const logDir = os.tmpdir();
  try {
    await migrateDatabase(scratch.url);
    // The demo fixtures and traffic, derived (what `npm run seed` loads).
    await seedDatabase(scratch.url, {
      events: Number(values.events),
      days: Number(values.days),
      seed: SEED,
      reset: true,
    });
    const db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    const zone = values["project-timezone"];
    if (zone !== undefined) {
      await db.query("UPDATE projects SET timezone = $2 WHERE id = $1", [PROJECT, zone]);
      // The next run rebuilds the project's per-day rows in its new zone.
      await db.query("SELECT refresh_derived()");
    }
    const pools = await valuePools(db);
    const { rows } = await db.query<{ last: Date }>(
      "SELECT max(created_at) AS last FROM events WHERE project_id = $1",
      [PROJECT],
    );
    await db.end();
    const last = rows[0]?.last ?? new Date();
    const lastDay = Date.UTC(last.getUTCFullYear(), last.getUTCMonth(), last.getUTCDate()) - DAY_MS;

    const rollups = await startBenchServer(scratch.url, path.join(logDir, "edge-differential-rollups.log"));
    const exact = await startBenchServer(scratch.url, path.join(logDir, "edge-differential-exact.log"), {
      ROLLUPS: "off",
    });
    const headers = {
      "openpanel-client-id": DEMO_READ_CLIENT.id,
      "openpanel-client-secret": DEMO_READ_CLIENT.secret,
      "Cache-Control": "no-cache",
    };
    const get = async (base: string, pathAndQuery: string) => {
      const response = await fetch(`${base}${pathAndQuery}`, {
        headers,
        signal: AbortSignal.timeout(120_000),
      });
      return { status: response.status, body: await response.text() };
    };
    const mismatches: Mismatch[] = [];
    const byKind = new Map<string, { sent: number; ok: number; counted: number }>();
    let next = 0;
    try {
      const worker = async () => {
        for (let index = next++; index < REQUESTS; index = next++) {
          const request = differentialRequest(SEED, index, PROJECT, pools, lastDay);
          const [fast, slow] = await Promise.all([
            get(rollups.base, request.path),
            get(exact.base, request.path),
          ]);
          const tally = byKind.get(request.kind) ?? { sent: 0, ok: 0, counted: 0 };
          tally.sent++;
          byKind.set(request.kind, tally);
          let differences: string[] = [];
          if (fast.status !== slow.status) {
            differences = [
              `status ${fast.status} against ${slow.status}: ${fast.body.slice(0, 200)} | ${slow.body.slice(0, 200)}`,
            ];
          } else if (fast.status === 200) {
            const exactAnswer = JSON.parse(slow.body);
            tally.ok++;
            if (countsSomething(exactAnswer)) tally.counted++;
            differences = answerDifferences(JSON.parse(fast.body), exactAnswer);
          }
          if (differences.length > 0) {
            mismatches.push({ index, request, differences });
          }
          if ((index + 1) % 250 === 0) process.stdout.write(`differential: ${index + 1} compared\n`);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      await rollups.stop();
      await exact.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    mismatches.sort((a, b) => a.index - b.index);
    const lines = [
      "# Differential report (`npm run differential`, issue 15)",
      "",
      `Run ${new Date(started).toISOString()}: ${REQUESTS.toLocaleString("en-US")} seeded requests (seed ${SEED}, ` +
        `${CONCURRENCY} at a time) on ${Number(values.events).toLocaleString("en-US")} demo events over ${values.days} days ` +
        `(the project's timezone ${zone ?? "UTC, as seeded"}), ` +
        `each sent to the Worker with its pre-aggregated paths and to one with \`ROLLUPS=off\`, in ${seconds.toFixed(0)} s.`,
      "",
      "| requests | sent | answered 200 | of which the exact answer counts something |",
      "|---|--:|--:|--:|",
      ...[...byKind]
        .sort()
        .map(([kind, { sent, ok, counted }]) => `| ${kind} | ${sent} | ${ok} | ${counted} |`),
      "",
      `Requests whose two answers differ (status, or any value beyond ±2 % on a metric named in \`meta.approximate\`): **${mismatches.length}**.`,
      ...mismatches
        .slice(0, 40)
        .map(
          (m) =>
            `- #${m.index} \`${decodeURIComponent(m.request.path).slice(0, 400)}\`: ${m.differences.slice(0, 4).join("; ")}`,
        ),
      "",
    ];
    await writeFile(values.out, lines.join("\n"));
    process.stdout.write(`${lines.join("\n")}\nreport: ${values.out}\n`);
    process.exitCode = mismatches.length > 0 ? 1 : 0;
  } finally {
    await scratch.drop();
  }
}

await main();
