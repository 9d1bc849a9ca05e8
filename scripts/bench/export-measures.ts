import http from "node:http";
import type pg from "pg";
import { encodeEventCursor } from "../../src/lib/cursors";
import { BENCH_PROJECT } from "./cases";
import { type ApiClient, apiGetOk, fmtMs, measure, progress, summarize, type Timing } from "./measure";
import type { BenchOptions } from "./options";
import type { BenchResults, StreamRun } from "./results";

/** The export measurements of the benchmark: NDJSON throughput and a cursor page deep in the order. */

const STREAM_EVENTS = 1_000_000;
/** Full streams measured; the report takes the median (one run varies by ±10 % on a shared machine). */
const STREAM_RUNS = 3;
const DEPTH = 5_000_000;
const PAGE = 50;

/**
 * Reads a streamed body to its end and counts its lines. Through node:http with the newline count
 * done by Buffer#indexOf, so the client costs little next to the service on a shared 2-core
 * machine: fetch's web streams with a per-byte loop took more CPU than the Worker itself and
 * capped the measured rate near 70,000 events/s while curl read the same stream at 125,000/s.
 */
function countStreamedLines(
  client: ApiClient,
  pathAndQuery: string,
  began: number,
): Promise<{ lines: number; firstByteMs: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${client.base}${pathAndQuery}`,
      { headers: client.headers, timeout: 30 * 60_000 },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`stream answered ${response.statusCode}`));
          return;
        }
        let lines = 0;
        let firstByteMs = 0;
        response.on("data", (chunk: Buffer) => {
          if (firstByteMs === 0) firstByteMs = performance.now() - began;
          for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
        });
        response.on("end", () => {
          if (response.complete) resolve({ lines, firstByteMs });
          else reject(new Error(`stream ended early after ${lines} lines`));
        });
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error("stream timed out")));
    request.on("error", reject);
  });
}

/** A full NDJSON stream of the newest million events (all of the project's when fewer). */
export async function measureStream(
  client: ApiClient,
  db: pg.Client,
  results: BenchResults,
  projectEvents: number,
) {
  progress("measuring the NDJSON export stream…");
  const params = new URLSearchParams({ projectId: BENCH_PROJECT, format: "ndjson" });
  let expected = projectEvents;
  let start: string | undefined;
  if (projectEvents > STREAM_EVENTS) {
    const row = await db.query<{ created_at: Date }>(
      `SELECT created_at FROM events WHERE project_id = $1
        ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
      [BENCH_PROJECT, STREAM_EVENTS - 1],
    );
    const at = row.rows[0]?.created_at;
    if (!at) throw new Error("could not find the start of the newest million events");
    start = at.toISOString();
    params.set("start", start);
    // Events sharing that millisecond make it slightly more than a million.
    const count = await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM events WHERE project_id = $1 AND created_at >= $2",
      [BENCH_PROJECT, at],
    );
    expected = Number(count.rows[0]?.n ?? 0);
  }
  const runs: StreamRun[] = [];
  for (let run = 0; run < STREAM_RUNS; run++) {
    const began = performance.now();
    const { lines, firstByteMs } = await countStreamedLines(
      client,
      `/export/events?${params.toString()}`,
      began,
    );
    const seconds = (performance.now() - began) / 1000;
    runs.push({ events: lines, seconds, firstByteMs });
    progress(`  ${lines.toLocaleString("en-US")} events in ${seconds.toFixed(1)} s`);
    if (lines !== expected) results.notes.push(`A stream delivered ${lines} events, expected ${expected}.`);
  }
  const median = [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)] as StreamRun;
  results.stream = { ...median, expected, start, runs };
}

/** The first JSON page vs a cursor page deep in the export order (the cursor built from SQL). */
export async function measureDepth(
  client: ApiClient,
  db: pg.Client,
  options: BenchOptions,
  results: BenchResults,
  projectEvents: number,
) {
  const depth = Math.min(DEPTH, projectEvents - PAGE);
  if (depth < PAGE) {
    results.depthSkipped = `skipped: the project has only ${projectEvents} events`;
    return;
  }
  progress(`measuring a cursor page at depth ${depth.toLocaleString("en-US")}…`);
  if (depth < DEPTH) {
    results.notes.push(
      `The project has ${projectEvents.toLocaleString("en-US")} events, so the deep page is at depth ` +
        `${depth.toLocaleString("en-US")} instead of 5,000,000.`,
    );
  }
  const row = await db.query<{ created_at: Date; id: string }>(
    `SELECT created_at, id::text AS id FROM events WHERE project_id = $1
      ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [BENCH_PROJECT, depth - 1],
  );
  const at = row.rows[0];
  if (!at) throw new Error("no event at that depth");
  // The cursor names the last event of the previous page, so the page starts at depth + 1.
  const cursor = await encodeEventCursor(client.cursorSecret, {
    createdAt: at.created_at.getTime(),
    id: at.id,
  });
  const first = `/export/events?projectId=${BENCH_PROJECT}&limit=${PAGE}`;
  const deep = `${first}&cursor=${cursor}`;
  const check = JSON.parse((await apiGetOk(client, deep, true)).body) as { data?: unknown[] };
  if (check.data?.length !== PAGE) {
    results.notes.push(`The deep page held ${check.data?.length ?? 0} events instead of ${PAGE}.`);
  }
  const budget = options.budgetSeconds * 1000;
  // Interleaved, so a drift of the machine during the test hits both sides alike.
  const firstTiming: Timing = { samples: [], errors: {} };
  const deepTiming: Timing = { samples: [], errors: {} };
  for (let i = 0; i < options.runs; i++) {
    for (const [request, timing] of [
      [first, firstTiming],
      [deep, deepTiming],
    ] as const) {
      const one = await measure(1, budget, async () => {
        await apiGetOk(client, request, true);
      });
      timing.samples.push(...one.samples);
      for (const [reason, count] of Object.entries(one.errors))
        timing.errors[reason] = (timing.errors[reason] ?? 0) + count;
    }
  }
  results.depth = { depth, first: summarize(firstTiming), deep: summarize(deepTiming) };
  progress(`  first page ${fmtMs(results.depth.first.p50)}, deep page ${fmtMs(results.depth.deep.p50)}`);
}
