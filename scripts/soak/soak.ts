/**
 * `npm run soak`: a cold burst of concurrent clients against the Worker under `wrangler dev`,
 * as a dashboard release or a cache expiry brings one (issue 16). For each database (the local
 * Postgres, then the embedded PGlite of `npm run dev`): a throwaway database seeded with demo
 * traffic, a fresh Worker (empty KV, cold isolate caches), then
 *
 * 1. the burst: `--clients` clients start at once and each sends its next request (scripts/soak/
 *    mix.ts) as soon as the last one is answered, for `--seconds`; rate limiting off, as a load
 *    test needs;
 * 2. the limiter: a fresh Worker with the default limit (100 per 10 s) gets 150 simultaneous
 *    requests of one client with cold caches: the ones past the budget must be 429s, none a 5xx.
 *
 * It writes the status counts and p50/p95/p99 per database to the report and exits 1 when any
 * answer was a 5xx or none came.
 *
 *   npm run soak -- [--clients 200] [--seconds 60] [--events 60000] [--databases postgres,embedded]
 *                   [--out scripts/soak/REPORT.md]
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { percentile, progress } from "../bench/measure";
import { type BenchServer, startBenchServer } from "../bench/server";
import { migrateDatabase } from "../db/apply-migrations";
import { createScratchDatabase } from "../db/scratch-database";
import { IN_MEMORY, startEmbeddedDatabase } from "../local/embedded";
import { DEMO_CLIENTS } from "../seed/demo-fixtures";
import { seedDatabase } from "../seed/loader";
import { Rng } from "../seed/random";
import { type RequestKind, type SoakValues, soakRequest } from "./mix";

const { values: args } = parseArgs({
  options: {
    clients: { type: "string", default: "200" },
    seconds: { type: "string", default: "60" },
    events: { type: "string", default: "60000" },
    databases: { type: "string", default: "postgres,embedded" },
    out: { type: "string", default: "scripts/soak/REPORT.md" },
  },
});
const CLIENTS = Number(args.clients);
const SECONDS = Number(args.seconds);
const EVENTS = Number(args.events);
const PROJECT = "demo";
const LIMITER_BURST = 150;

const reader = DEMO_CLIENTS.find((client) => client.type === "read" && client.projectId === PROJECT);
if (!reader) throw new Error("no demo read client");
const HEADERS = { "openpanel-client-id": reader.id, "openpanel-client-secret": reader.secret };

interface Answer {
  kind: RequestKind | "limiter";
  status: number;
  ms: number;
  /** The problem `code` of an error answer, or what went wrong without one. */
  code?: string;
  /** Answered with another request's answer, computed once in the isolate (single flight). */
  coalesced?: boolean;
}

interface DatabaseRun {
  name: string;
  burst: Answer[];
  burstSeconds: number;
  limiter: Answer[];
  seedSeconds: number;
}

async function send(base: string, kind: Answer["kind"], requestPath: string): Promise<Answer> {
  const began = performance.now();
  try {
    const response = await fetch(`${base}${requestPath}`, {
      headers: HEADERS,
      signal: AbortSignal.timeout(120_000),
    });
    const body = await response.text();
    const ms = performance.now() - began;
    const coalesced = (response.headers.get("cache-status") ?? "").includes("detail=coalesced");
    if (response.status < 400) return { kind, status: response.status, ms, coalesced };
    let code: string | undefined;
    try {
      code = (JSON.parse(body) as { code?: string }).code;
    } catch {
      code = `not problem+json: ${body.slice(0, 80)}`;
    }
    return { kind, status: response.status, ms, code };
  } catch (error) {
    return { kind, status: 0, ms: performance.now() - began, code: (error as Error).message };
  }
}

/** Filter values and the last day, read from the seeded data. */
async function readValues(url: string): Promise<SoakValues> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const top = async (column: string) =>
      (
        await client.query<{ value: string }>(
          `SELECT ${column} AS value FROM events WHERE project_id = $1 AND ${column} IS NOT NULL AND ${column} <> ''
           GROUP BY 1 ORDER BY count(*) DESC LIMIT 8`,
          [PROJECT],
        )
      ).rows.map((row) => row.value);
    const last = await client.query<{ day: string }>(
      "SELECT to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM events WHERE project_id = $1",
      [PROJECT],
    );
    return {
      projectId: PROJECT,
      countries: await top("country"),
      paths: await top("path"),
      eventNames: await top("name"),
      lastDay: last.rows[0]?.day ?? new Date().toISOString().slice(0, 10),
    };
  } finally {
    await client.end();
  }
}

async function burst(
  server: BenchServer,
  values: SoakValues,
): Promise<{ answers: Answer[]; seconds: number }> {
  const answers: Answer[] = [];
  const began = performance.now();
  const deadline = began + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, index) => {
      const rng = new Rng(20261125 + index);
      while (performance.now() < deadline) {
        const request = soakRequest(rng, values);
        answers.push(await send(server.base, request.kind, request.path));
      }
    }),
  );
  return { answers, seconds: (performance.now() - began) / 1000 };
}

async function limiterBurst(server: BenchServer): Promise<Answer[]> {
  return Promise.all(
    Array.from({ length: LIMITER_BURST }, () =>
      send(server.base, "limiter", `/insights/${PROJECT}/metrics?range=7d`),
    ),
  );
}

async function runOn(name: string, database: { url: string; drop(): Promise<void> }): Promise<DatabaseRun> {
  try {
    progress(`${name}: migrating and seeding ${EVENTS.toLocaleString("en-US")} events`);
    const seedBegan = performance.now();
    await migrateDatabase(database.url);
    await seedDatabase(database.url, {
      events: EVENTS,
      days: 60,
      seed: 1,
      reset: false,
      projects: [PROJECT],
    });
    const seedSeconds = (performance.now() - seedBegan) / 1000;
    const values = await readValues(database.url);
    const log = (part: string) => path.join(os.tmpdir(), `edge-soak-${name}-${part}.log`);

    progress(`${name}: ${CLIENTS} clients for ${SECONDS} s`);
    let server = await startBenchServer(database.url, log("burst"));
    let result: { answers: Answer[]; seconds: number };
    try {
      result = await burst(server, values);
    } finally {
      await server.stop();
    }

    progress(`${name}: ${LIMITER_BURST} simultaneous requests of one client, limit 100 per 10 s`);
    server = await startBenchServer(database.url, log("limiter"), { RATE_LIMIT_PER_10S: "100" });
    let limiter: Answer[];
    try {
      limiter = await limiterBurst(server);
    } finally {
      await server.stop();
    }
    return { name, burst: result.answers, burstSeconds: result.seconds, limiter, seedSeconds };
  } finally {
    await database.drop();
  }
}

const ms = (value: number | undefined) => (value === undefined ? "–" : `${Math.round(value)} ms`);

function statusCounts(answers: readonly Answer[]): string {
  const counts = new Map<string, number>();
  for (const answer of answers) {
    const label =
      answer.status === 0 ? "no answer" : `${answer.status}${answer.code ? ` ${answer.code}` : ""}`;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, count]) => `${label}: ${count.toLocaleString("en-US")}`)
    .join("; ");
}

const failed = (answer: Answer) => answer.status === 0 || answer.status >= 500;

function report(runs: readonly DatabaseRun[], started: Date): string {
  const lines = [
    "# Soak report (`npm run soak`, issue 16)",
    "",
    `Run ${started.toISOString()} on ${os.cpus().length} vCPUs: ${EVENTS.toLocaleString("en-US")} seeded events ` +
      `(60 days, project \`${PROJECT}\`); the Worker under \`wrangler dev\` through the relay (at most 64 ` +
      "Postgres sessions, the rest queued), a fresh Worker per phase (empty KV, cold isolate caches).",
    "",
    `Burst: ${CLIENTS} clients start at once, each sending its next request when the last is answered, ` +
      `for ${SECONDS} s (rate limiting off); the mix of scripts/soak/mix.ts: every insights route, presets and ` +
      "custom windows, no filter or one or two filters with values read from the data, export pages and streams, charts.",
    "",
    "| database | requests | requests/s | p50 | p95 | p99 | max | answers ≥ 500 or none | coalesced | statuses |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
  ];
  for (const run of runs) {
    const times = run.burst.map((answer) => answer.ms);
    lines.push(
      `| ${run.name} | ${run.burst.length.toLocaleString("en-US")} | ${Math.round(run.burst.length / run.burstSeconds)} | ` +
        `${ms(percentile(times, 50))} | ${ms(percentile(times, 95))} | ${ms(percentile(times, 99))} | ` +
        `${ms(Math.max(...times))} | ${run.burst.filter(failed).length} | ` +
        `${run.burst.filter((answer) => answer.coalesced).length} | ${statusCounts(run.burst)} |`,
    );
  }
  lines.push(
    "",
    "Coalesced: answers a request got from an identical one computing it in the same isolate at the same time (single flight) instead of querying.",
    "",
    `Limiter: ${LIMITER_BURST} simultaneous \`/metrics\` requests of one client, limit 100 per 10 s, cold caches.`,
    "",
    "| database | p50 | p99 | answers ≥ 500 or none | statuses |",
    "|---|--:|--:|--:|---|",
  );
  for (const run of runs) {
    const times = run.limiter.map((answer) => answer.ms);
    lines.push(
      `| ${run.name} | ${ms(percentile(times, 50))} | ${ms(percentile(times, 99))} | ${run.limiter.filter(failed).length} | ${statusCounts(run.limiter)} |`,
    );
  }
  lines.push(
    "",
    "Per kind of request (burst):",
    "",
    "| database | kind | requests | p50 | p99 |",
    "|---|---|--:|--:|--:|",
  );
  for (const run of runs) {
    const kinds = [...new Set(run.burst.map((answer) => answer.kind))].sort();
    for (const kind of kinds) {
      const times = run.burst.filter((answer) => answer.kind === kind).map((answer) => answer.ms);
      lines.push(
        `| ${run.name} | ${kind} | ${times.length.toLocaleString("en-US")} | ${ms(percentile(times, 50))} | ${ms(percentile(times, 99))} |`,
      );
    }
  }
  lines.push(
    "",
    `Seeding took ${runs.map((run) => `${run.seedSeconds.toFixed(0)} s (${run.name})`).join(", ")}.`,
    "",
  );
  return lines.join("\n");
}

async function main(): Promise<void> {
  const started = new Date();
  const runs: DatabaseRun[] = [];
  for (const name of (args.databases ?? "").split(",").filter(Boolean)) {
    if (name === "postgres") {
      const scratch = await createScratchDatabase("soak");
      if (scratch.embedded) throw new Error("no Postgres reachable: run with --databases embedded");
      runs.push(await runOn(name, scratch));
    } else if (name === "embedded") {
      const embedded = await startEmbeddedDatabase({ dataDir: IN_MEMORY });
      runs.push(await runOn(name, { url: embedded.url, drop: () => embedded.close() }));
    } else {
      throw new Error(`unknown database ${name}: use postgres, embedded or both`);
    }
  }
  const text = report(runs, started);
  await writeFile(args.out, text);
  process.stdout.write(`${text}\nreport: ${args.out}\n`);
  const bad = runs.some(
    (run) => run.burst.some(failed) || run.limiter.some(failed) || run.burst.length === 0,
  );
  process.exitCode = bad ? 1 : 0;
}

await main();
