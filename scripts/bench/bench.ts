/**
 * The benchmark of issues 5 and 15.
 *
 *   npm run bench -- [--events <n>] [--days <d>] [--seed <s>] [--runs <k>] [--budget <s>]
 *                    [--database <name>] [--reload] [--smoke] [--sections core,filtered,export]
 *                    [--load-only] [--compare <earlier.json>] [--out <file>]
 *
 * Loads a data set into its own database (once), picks the filters to measure from its data
 * (filters.ts), serves the Worker with `wrangler dev` and the relay, and measures through that
 * real path (uncached and cached) and as plain SQL over raw events on the same database: the
 * core matrix (every endpoint × window × none/session/event filter, issue 5), the filtered
 * section (issue 15: filter cases × endpoints over 30 and 90 days, filtered.ts), then export
 * throughput and cursor depth. Prints the report (Markdown) to stdout, writes it to --out and the
 * results as JSON beside it (the input of a later `--compare`). Progress goes to stderr.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describeTarget } from "../local/target-database";
import { DEMO_CLIENTS } from "../seed/demo-fixtures";
import {
  apiRequest,
  BENCH_PROJECT,
  type BenchFilter,
  benchWindow,
  ENDPOINTS,
  FILTER_KINDS,
  WINDOW_DAYS,
} from "./cases";
import {
  insertLiveTail,
  prepareBenchDatabase,
  readDataFacts,
  readMachineFacts,
  removeLiveTail,
} from "./database";
import { measureDepth, measureStream } from "./export-measures";
import { measureFiltered } from "./filtered";
import { describeCase, pickFilters } from "./filters";
import { type ApiClient, apiGet, fmtMs, measure, progress, RunFailure, summarize } from "./measure";
import {
  BENCH_USAGE,
  type BenchOptions,
  BenchUsageError,
  databaseUrl,
  parseBenchOptions,
  resultsJsonPath,
} from "./options";
import { renderReport } from "./report";
import { type BenchResults, coreFilter, coreFilterId } from "./results";
import { loadComparedRun, resultsJson } from "./results-json";
import { measureRoutes } from "./routes";
import { BaselineRunner, cellOf, measureApiCell } from "./run-cells";
import { type BenchServer, startBenchServer } from "./server";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The window of /live in the benchmark (its default). */
const LIVE_MINUTES = 5;

function readClient({ base, cursorSecret }: BenchServer): ApiClient {
  const read = DEMO_CLIENTS.find((c) => c.type === "read" && c.projectId === BENCH_PROJECT);
  if (!read) throw new Error(`no demo read client for project ${BENCH_PROJECT}`);
  return {
    base,
    cursorSecret,
    headers: { "openpanel-client-id": read.id, "openpanel-client-secret": read.secret },
  };
}

/**
 * Filters no data set holds a value for: requests under them open every table a filtered answer
 * reads (one filter, two, a page filter, a text operator, a chart) and plan its statements, which
 * a pooled Postgres session does once, and read no data page the measured cells will.
 */
const WARM_FILTERS: readonly (readonly BenchFilter[])[] = [
  [{ name: "country", operator: "is", value: ["ZZ"] }],
  [
    { name: "country", operator: "is", value: ["ZZ"] },
    { name: "browser", operator: "is", value: ["no such browser"] },
  ],
  [{ name: "path", operator: "is", value: ["/no-such-page"] }],
  [{ name: "path", operator: "contains", value: ["/no-such-section/"] }],
];

/** The cells' requests the warm-up asks under those filters: a chart, and each kind of answer. */
const WARM_ENDPOINTS: ReadonlySet<string> = new Set(["metrics", "pages", "breakdown:city", "charts"]);

/**
 * A few unmeasured requests first: the first ones after wrangler starts pay for compiling the
 * Worker's code paths and opening the relay's pooled sessions (20–50 ms instead of 10), and a
 * session's first read of a table builds its catalog entries and plans (40–94 ms instead of 5–6
 * for one-filter `/pages`), which says nothing about the steady state the targets are about.
 */
async function warmUp(client: ApiClient): Promise<void> {
  // One whole UTC day, as the measured windows are, long before any data set's traffic.
  const day = benchWindow(1, new Date(Date.UTC(2020, 0, 7)));
  const endpoints = ENDPOINTS.filter((e) => WARM_ENDPOINTS.has(e.id));
  const filtered = WARM_FILTERS.flatMap((filters) => endpoints.map((e) => apiRequest(e, day, filters)));
  const requests = [
    "/__bench_floor",
    "/health",
    `/insights/${BENCH_PROJECT}/live`,
    `/insights/${BENCH_PROJECT}/metrics?range=today`,
    `/insights/${BENCH_PROJECT}/country?range=today`,
    `/export/events?projectId=${BENCH_PROJECT}&limit=1`,
    ...filtered,
  ];
  for (let round = 0; round < 3; round++) {
    for (const request of requests) {
      const answer = await apiGet(client, request, true).catch(() => undefined);
      // A filtered warm-up that fails would leave the first cells cold again without a word.
      if (round === 0 && filtered.includes(request) && answer?.status !== 200) {
        progress(`warm-up: ${request} answered ${answer?.status ?? "nothing"}`);
      }
    }
  }
}

/** The core matrix (issue 5): every endpoint × window × filter kind, ours uncached and cached. */
async function measureApi(
  client: ApiClient,
  options: BenchOptions,
  results: BenchResults,
  dataEnd: Date,
  db: pg.Client,
): Promise<void> {
  progress("measuring the API (uncached and cached)…");
  for (const endpoint of ENDPOINTS.filter((e) => !e.windowed)) {
    const cell = cellOf(results, "none", endpoint, undefined);
    await measureApiCell(client, options, endpoint, undefined, undefined, cell, endpoint.label);
  }
  for (const days of WINDOW_DAYS) {
    const window = benchWindow(days, dataEnd);
    for (const kind of FILTER_KINDS) {
      const filterId = coreFilterId(results, kind);
      if (filterId === undefined) continue;
      const filters = kind === "none" ? undefined : coreFilter(results, kind)?.filters;
      for (const endpoint of ENDPOINTS.filter((e) => e.windowed)) {
        const cell = cellOf(results, filterId, endpoint, days);
        const where = `${endpoint.label} ${days}d ${filterId}`;
        const metrics = await measureApiCell(client, options, endpoint, window, filters, cell, where);
        if (metrics && kind === "none" && typeof metrics.metrics?.unique_visitors === "number") {
          // The exact count over the same sessions (first event in the window), from the sessions table.
          const exact = await db.query<{ n: string }>(
            `SELECT count(DISTINCT profile_id) AS n FROM sessions
              WHERE project_id = $1 AND started_at >= $2 AND started_at < $3`,
            [BENCH_PROJECT, window.start, window.end],
          );
          results.visitors.push({
            days,
            api: metrics.metrics.unique_visitors,
            exact: Number(exact.rows[0]?.n ?? 0),
            approximate: (metrics.meta?.approximate ?? []).includes("unique_visitors"),
          });
        }
      }
    }
  }
}

async function measureBaseline(db: pg.Client, options: BenchOptions, results: BenchResults, dataEnd: Date) {
  progress("measuring the plain-SQL baseline…");
  const baselines = new BaselineRunner(db, options, dataEnd);
  await baselines.begin();
  for (const endpoint of ENDPOINTS.filter((e) => !e.windowed)) {
    await baselines.run(cellOf(results, "none", endpoint, undefined), endpoint, undefined, "none", undefined);
  }
  for (const days of WINDOW_DAYS) {
    const window = benchWindow(days, dataEnd);
    for (const kind of FILTER_KINDS) {
      const filterId = coreFilterId(results, kind);
      if (filterId === undefined) continue;
      const filters = kind === "none" ? undefined : coreFilter(results, kind)?.filters;
      for (const endpoint of ENDPOINTS.filter((e) => e.windowed)) {
        await baselines.run(cellOf(results, filterId, endpoint, days), endpoint, window, filterId, filters);
      }
    }
  }
  await baselines.end();
}

async function wranglerVersion(): Promise<string | undefined> {
  try {
    const text = await readFile(path.join(ROOT, "node_modules", "wrangler", "package.json"), "utf8");
    return (JSON.parse(text) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

async function writeReport(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${text}\n`);
}

async function main(): Promise<void> {
  let options: BenchOptions;
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    process.stdout.write(`${BENCH_USAGE}\n`);
    return;
  }
  try {
    options = parseBenchOptions(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof BenchUsageError) {
      process.stderr.write(`bench: ${error.message}\n${BENCH_USAGE}\n`);
      process.exit(2);
    }
    throw error;
  }
  const out = path.resolve(ROOT, options.out);
  const partialOut = path.join(path.dirname(out), `${path.basename(out)}.partial.tmp`);
  const results: BenchResults = {
    startedAt: new Date(),
    options: {
      events: options.events,
      days: options.days,
      seed: options.seed,
      runs: options.runs,
      budgetSeconds: options.budgetSeconds,
      baselineTimeoutSeconds: options.baselineTimeoutSeconds,
      smoke: options.smoke,
      sections: options.sections,
      dbRoundTripMs: options.dbRoundTripMs,
      rounds: options.rounds,
    },
    database: options.database,
    cells: new Map(),
    visitors: [],
    notes: [],
  };
  if (options.compare) results.compare = await loadComparedRun(path.resolve(process.cwd(), options.compare));
  const runs = (section: BenchOptions["sections"][number]) => options.sections.includes(section);
  let server: BenchServer | undefined;
  let db: pg.Client | undefined;

  // Ctrl-C (or a failure) stops wrangler and the relay, bounded in time, and keeps what was measured.
  // One shutdown only: a failure caused by the shutdown itself (a closed client) joins it.
  let stopping: Promise<never> | undefined;
  const stopAll = (reason: string, code: number): Promise<never> => {
    stopping ??= (async (): Promise<never> => {
      const hardStop = setTimeout(() => process.exit(code), 15_000);
      hardStop.unref();
      results.interrupted = reason;
      // Rendered now: requests still in flight fail once wrangler stops, and are no measurement.
      const partial = renderReport(results);
      const partialJson = resultsJson(results);
      progress(`bench: ${reason}; stopping wrangler and the relay…`);
      await server?.stop().catch(() => undefined);
      await db?.end().catch(() => undefined);
      await writeReport(partialOut, partial).catch(() => undefined);
      await writeReport(resultsJsonPath(partialOut), partialJson).catch(() => undefined);
      progress(`partial report: ${path.relative(process.cwd(), partialOut)}`);
      process.exit(code);
    })();
    return stopping;
  };
  let firstSignalAt = 0;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (stopping) {
        // Ctrl-C arrives twice at once (from the terminal and relayed by tsx): only a later one
        // means "don't wait".
        if (performance.now() - firstSignalAt < 1_000) return;
        process.exit(130);
      }
      firstSignalAt = performance.now();
      void stopAll(signal, 130);
    });
  }

  try {
    const url = databaseUrl(options.adminUrl, options.database);
    progress(`bench: database ${describeTarget(url)}`);
    const prepared = await prepareBenchDatabase(
      options.adminUrl,
      options.database,
      url,
      {
        events: options.events,
        days: options.days,
        seed: options.seed,
        reload: options.reload,
        slices: options.slices,
        minFreeBytes: options.minFreeGb * 1024 ** 3,
      },
      progress,
    );
    results.reused = prepared.reused;
    results.settleSeconds = prepared.settleSeconds;
    results.marker = prepared.marker;
    results.data = await readDataFacts(url, BENCH_PROJECT);
    const dataEnd = results.data.last;
    const projectEvents = results.data.projectEvents;
    progress(
      `data: ${results.data.projectEvents.toLocaleString("en-US")} events of project ${BENCH_PROJECT}, ` +
        `ending ${dataEnd.toISOString()}`,
    );
    if (options.loadOnly) {
      progress("bench: --load-only, stopping here");
      return;
    }
    results.machine = await readMachineFacts(url);
    results.wrangler = await wranglerVersion();

    const sql = new pg.Client({ connectionString: url });
    db = sql;
    await sql.connect();
    if (runs("core") || runs("filtered")) {
      progress("picking the filters from the data…");
      results.picks = await pickFilters(sql, benchWindow(30, dataEnd));
      for (const c of results.picks.cases) progress(`  ${c.id}: ${describeCase(c)}`);
      for (const line of results.picks.skipped) progress(`  skipped: ${line}`);
    }

    const logFile = path.join(ROOT, "scripts", "bench", "wrangler-output.tmp");
    await mkdir(path.dirname(logFile), { recursive: true });
    progress(`starting the relay and wrangler dev (log: ${path.relative(process.cwd(), logFile)})…`);
    server = await startBenchServer(url, logFile, {}, { roundTripMs: options.dbRoundTripMs });
    progress(`serving on ${server.base}`);
    const client = readClient(server);
    await warmUp(client);
    results.floor = summarize(
      await measure(options.runs * 3, options.budgetSeconds * 1000, async () => {
        const answer = await apiGet({ ...client, headers: {} }, "/__bench_floor", false);
        if (answer.status !== 404) throw new RunFailure(`HTTP ${answer.status}`);
      }),
    );
    progress(`floor (a 404 without auth or database): ${fmtMs(results.floor.p50)}`);

    if (runs("core")) {
      const marker = prepared.marker;
      // Laid anew before each side, so both find it within the last 5 minutes however long the other took.
      const layLiveTail = async () => {
        await removeLiveTail(sql, marker);
        return insertLiveTail(sql, BENCH_PROJECT, marker, projectEvents, LIVE_MINUTES);
      };
      try {
        const tail = await layLiveTail();
        results.notes.push(
          `/live (the last ${LIVE_MINUTES} minutes) reads ${tail.toLocaleString("en-US")} events: the ` +
            "project's newest events, as many as the data set holds per 5 minutes on average, copied to end " +
            "one second before the measurement (the data set itself ends when it was loaded), and removed after.",
        );
        await measureApi(client, options, results, dataEnd, sql);
        await layLiveTail();
        await measureBaseline(sql, options, results, dataEnd);
      } finally {
        await removeLiveTail(sql, marker);
      }
    }
    if (runs("filtered")) await measureFiltered(client, sql, options, results, dataEnd);
    if (runs("routes")) {
      progress("the routes of issue 17…");
      results.routes = await measureRoutes(client, sql, options, dataEnd);
    } else {
      results.routesSkipped = "not run (--sections)";
    }
    if (!runs("export")) {
      results.streamSkipped = "not run (--sections)";
      results.depthSkipped = "not run (--sections)";
    } else if (options.smoke) {
      results.streamSkipped = "skipped (--smoke)";
      results.depthSkipped = "skipped (--smoke)";
    } else {
      await measureStream(client, sql, results, results.data.projectEvents);
      await measureDepth(client, sql, options, results, results.data.projectEvents);
    }
    await db.end();
    db = undefined;
    await server.stop();
    server = undefined;
  } catch (error) {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`bench failed: ${detail}\n`);
    await stopAll("failed", 1);
  }

  results.finishedAt = new Date();
  const report = renderReport(results);
  process.stdout.write(`${report}\n`);
  await writeReport(out, report);
  const json = resultsJsonPath(out);
  await writeReport(json, resultsJson(results));
  progress(`report: ${path.relative(process.cwd(), out)}; results: ${path.relative(process.cwd(), json)}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
