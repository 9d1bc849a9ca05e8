/**
 * `npm run bench:refresh`: what the derived data costs to keep (issue 15, deliverable 5).
 *
 *   npm run bench:refresh -- [--source <db>] [--rate <events/s>] [--minutes <n>] [--lead <n>]
 *     [--interval <n>|follow] [--serial | --strings-with-sessions] [--keep] [--out <file.md>]
 *
 * Copies a loaded benchmark database (default `bench_10000000_90_1`, see `npm run bench`), then
 * replays a sustained ingest on the copy: `--minutes` minutes (default 10) of demo traffic at
 * `--rate` events per second (default 1,000), generated after the data set's end and inserted one
 * minute at a time, each minute followed by a run as the cron trigger makes it: the session family
 * of `refresh_derived()` on one connection and at once the event family, then the session strings,
 * on another (src/queries/derived.ts;
 * `--serial`: `refresh_derived()` on one; `--strings-with-sessions`: the strings after the session
 * family on its connection, as before migration 0105, to compare). `--interval n`: n minutes between runs; `--interval
 * follow`: as the cron trigger schedules them, which skips a family while a run of it is under way,
 * so a run folds the whole minutes its predecessor took, at least one. Sessions run across
 * minutes as they do in live traffic, so every refresh also revisits sessions an earlier one saw.
 * Before the timed minutes, `--lead` minutes (default 30) of the same traffic are inserted and
 * refreshed untimed, so that the timed ones meet the running sessions of a steady state; the
 * traffic is generated TAIL_MINUTES past the last timed minute and that tail is never inserted,
 * since the generator moves a session that would run past its end to start earlier (generated
 * for the timed minutes alone, a quarter to a third of the events fell before the first of them
 * and were never inserted, and every moved session ended in the last).
 * It reports the time of each refresh and of each routine within it (track_functions), the
 * write-ahead log each refresh writes, and the storage of `events` against the derived tables.
 * The copy is dropped at the end unless `--keep`. The report goes to standard output, and with `--out`
 * also to that file, headed by the run's time, its arguments and the machine's facts (its CPU
 * probes, as the benchmark's reports give them), so that runs of different days compare.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { DemoDataGenerator, EVENT_COLUMNS } from "../seed/generator";
import { copyChunks, DEFAULT_PROJECT_SHARES } from "../seed/loader";
import { readMachineFacts, withClient } from "./database";
import { percentile } from "./measure";
import { databaseUrl } from "./options";
import { machineLines } from "./report";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MINUTE = 60_000;
/** Traffic generated past the last timed minute and never inserted: longer than nearly every session. */
const TAIL_MINUTES = 30;

interface RefreshCostOptions {
  source: string;
  rate: number;
  minutes: number;
  lead: number;
  /** Minutes of traffic each run folds, or "follow": the minutes the previous run took, rounded up. */
  interval: number | "follow";
  /** refresh_derived() on one connection, rather than its two families at once as the cron runs them. */
  serial: boolean;
  stringsWithSessions: boolean;
  keep: boolean;
  /** A file the report is also written to, with a header naming the run and the machine. */
  out: string | undefined;
  adminUrl: string;
}

function parseOptions(argv: readonly string[]): RefreshCostOptions {
  const options: RefreshCostOptions = {
    source: "bench_10000000_90_1",
    rate: 1_000,
    minutes: 10,
    lead: 30,
    interval: 1,
    serial: false,
    stringsWithSessions: false,
    keep: false,
    out: undefined,
    adminUrl: process.env.BENCH_ADMIN_URL?.trim() || "postgres://postgres@127.0.0.1:5432/postgres",
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--source") options.source = value();
    else if (flag === "--rate") options.rate = Number(value());
    else if (flag === "--minutes") options.minutes = Number(value());
    else if (flag === "--lead") options.lead = Number(value());
    else if (flag === "--interval") {
      const interval = value();
      options.interval = interval === "follow" ? "follow" : Number(interval);
    } else if (flag === "--serial") options.serial = true;
    else if (flag === "--strings-with-sessions") options.stringsWithSessions = true;
    else if (flag === "--keep") options.keep = true;
    else if (flag === "--out") options.out = value();
    else throw new Error(`unknown argument ${flag}`);
  }
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(options.source)) throw new Error("--source must be a database name");
  if (!(options.rate > 0) || !Number.isInteger(options.minutes) || options.minutes < 1) {
    throw new Error("--rate must be positive and --minutes a positive integer");
  }
  if (options.interval !== "follow" && !(Number.isInteger(options.interval) && options.interval >= 1))
    throw new Error('--interval must be a whole number of minutes or "follow"');
  if (!Number.isInteger(options.lead) || options.lead < 0)
    throw new Error("--lead must be a whole number of minutes");
  return options;
}

/** Milliseconds per PL/pgSQL function since the statistics were last read (self and total). */
async function functionTimes(client: pg.Client): Promise<Map<string, number>> {
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query<{ name: string; total: number }>(
    "SELECT funcname AS name, total_time AS total FROM pg_stat_user_functions",
  );
  return new Map(rows.map((row) => [row.name, Number(row.total)]));
}

/** The server's write-ahead log position, as text (an LSN). */
async function walPosition(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
  return rows[0]?.lsn ?? "0/0";
}

/**
 * Bytes of write-ahead log since `from`: what a run costs in WAL (replication, Neon's storage,
 * checkpoints), beside its time. The whole server's, so nothing else may write meanwhile.
 */
async function walWritten(client: pg.Client, from: string): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text AS bytes",
    [from],
  );
  return Number(rows[0]?.bytes ?? 0);
}

/**
 * One run as the cron trigger makes it (src/queries/derived.ts): the session family on `client` and
 * at once on `eventClient` the event family, then the session strings (which take in the sessions
 * committed by then: the run before's while this run's family is still running); with `serial`,
 * refresh_derived() on `client` alone.
 */
async function refreshRun(
  client: pg.Client,
  eventClient: pg.Client,
  options: RefreshCostOptions,
): Promise<void> {
  if (options.serial) {
    await client.query("SELECT refresh_derived()");
    return;
  }
  if (options.stringsWithSessions) {
    await Promise.all([
      client
        .query("SELECT refresh_session_family(true)")
        .then(() => client.query("SELECT refresh_session_strings(true)")),
      eventClient.query("SELECT refresh_event_family(true)"),
    ]);
    return;
  }
  await Promise.all([
    client.query("SELECT refresh_session_family(true)"),
    eventClient
      .query("SELECT refresh_event_family(true)")
      // In one snapshot, beside the family, as the cron runs them (src/queries/derived.ts).
      .then(() => eventClient.query("BEGIN ISOLATION LEVEL REPEATABLE READ"))
      .then(() => eventClient.query("SELECT refresh_session_strings(true)"))
      .then(() => eventClient.query("COMMIT")),
  ]);
}

/** The median of some run times (nearest rank, as the benchmark's cells). */
const median = (values: readonly number[]): number => percentile(values, 50) ?? 0;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const megabytes = (bytes: number): string => `${Math.round(bytes / 1_048_576).toLocaleString("en-US")} MB`;

/** Tables derived from `events` by refresh_derived(), by family. */
const DERIVED_TABLES = `'sessions','session_pages','session_names','session_properties','session_rollups','session_day_rollups',
  'page_rollups','page_day_rollups','visitor_sketches','visitor_day_sketches',
  'visitor_dimension_sketches','session_pair_rollups','page_dimension_rollups','event_rollups','event_pair_rollups','event_pair_timezones',
  'session_day_bits','session_day_slices','visitor_day_bits','visitor_day_mixed','visitor_ordinals',
  'page_day_bits','page_day_slices','session_day_ordinals',
  'event_day_bits','event_day_sizes','event_day_members','event_day_firsts','event_day_first_pages','event_bit_timezones',
  'entry_exit_rollups','entry_exit_day_rollups','event_name_catalogue','event_key_catalogue',
  'event_value_catalogue','profile_summaries','profile_days','active_user_days','retention_weeks'`;

async function storage(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c
     WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
       AND (c.relname = 'events' OR c.relname IN (${DERIVED_TABLES}))
     ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  const events = Number(rows.find((row) => row.name === "events")?.bytes ?? 0);
  const derived = rows.filter((row) => row.name !== "events");
  const total = derived.reduce((sum, row) => sum + Number(row.bytes), 0);
  return [
    "| table | size (with indexes and TOAST) | vs events |",
    "|---|--:|--:|",
    ...rows.map(
      (row) =>
        `| \`${row.name}\` | ${megabytes(Number(row.bytes))} | ${((100 * Number(row.bytes)) / events).toFixed(1)} % |`,
    ),
    `| all derived tables | ${megabytes(total)} | ${((100 * total) / events).toFixed(1)} % |`,
  ];
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const copy = `${options.source}_refresh`;
  const url = databaseUrl(options.adminUrl, copy);
  const log = (message: string) => process.stderr.write(`${new Date().toISOString()} ${message}\n`);

  const began = new Date();
  // Measured before the replay, as the benchmark's reports do: the same machine runs 2–3× slower
  // on some days, and a run's time means little without it.
  const machine = options.out === undefined ? undefined : await readMachineFacts(options.adminUrl);
  log(`copying ${options.source} to ${copy}…`);
  await withClient(options.adminUrl, async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS "${copy}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${copy}" TEMPLATE "${options.source}"`);
  });
  const lines: string[] = [];
  try {
    await withClient(url, async (client) => {
      await client.query("SET track_functions = 'pl'");
      const end = await client.query<{ end: Date }>("SELECT max(created_at) AS end FROM events");
      // The lead-in starts at the data set's end, the timed minutes after it, the tail after them.
      const leadStart = Math.ceil((end.rows[0]?.end.getTime() ?? Date.now()) / MINUTE) * MINUTE;
      const start = leadStart + options.lead * MINUTE;
      const generated = options.lead + options.minutes + TAIL_MINUTES;
      const perMinute = Math.round(options.rate * 60);
      // Staged once, so the timed part is the insert and the refresh, as a pipeline would see them.
      log(`generating ${(perMinute * generated).toLocaleString("en-US")} events…`);
      await client.query("CREATE UNLOGGED TABLE refresh_cost_events (LIKE events INCLUDING DEFAULTS)");
      const generator = new DemoDataGenerator({
        events: perMinute * generated,
        days: generated / 1440,
        seed: 20_261_125,
        now: new Date(leadStart + generated * MINUTE),
        projects: DEFAULT_PROJECT_SHARES,
        ingestXid: "0",
      });
      await copyChunks(
        client,
        `COPY refresh_cost_events (${EVENT_COLUMNS.join(", ")}) FROM STDIN`,
        generator.eventChunks(),
        () => {},
      );
      // Each minute is read from the staged events by its time, not by a scan of all of them.
      await client.query("CREATE INDEX ON refresh_cost_events (created_at)");
      // The data set's own last refresh is behind it; a first run settles anything pending.
      await client.query("SELECT refresh_derived()");
      const columns = EVENT_COLUMNS.filter((column) => column !== "ingest_xid").join(", ");
      const insertBetween = (from: number, to: number) =>
        client.query(
          `INSERT INTO events (${columns}) SELECT ${columns} FROM refresh_cost_events
           WHERE created_at >= $1 AND created_at < $2`,
          [new Date(from), new Date(to)],
        );
      if (options.lead > 0) {
        const lead = await insertBetween(leadStart, start);
        log(
          `lead-in: ${(lead.rowCount ?? 0).toLocaleString("en-US")} events over ${options.lead} minutes, refreshing…`,
        );
        await client.query("SELECT refresh_derived()");
      }
      let before = await functionTimes(client);
      const runs: {
        minutes: number;
        events: number;
        insertMs: number;
        refreshMs: number;
        walBytes: number;
        routines: Map<string, number>;
      }[] = [];
      // The event family's connection (a run as the cron makes it), opened before the timed runs.
      await withClient(url, async (eventClient) => {
        await eventClient.query("SET track_functions = 'pl'");
        for (let folded = 0; folded < options.minutes; ) {
          const previous = runs.at(-1);
          const wanted =
            options.interval !== "follow"
              ? options.interval
              : Math.max(1, Math.ceil((previous?.refreshMs ?? 0) / MINUTE));
          const minutes = Math.min(wanted, options.minutes - folded);
          const insertStart = performance.now();
          const inserted = await insertBetween(start + folded * MINUTE, start + (folded + minutes) * MINUTE);
          folded += minutes;
          const insertMs = performance.now() - insertStart;
          const walBefore = await walPosition(client);
          const refreshStart = performance.now();
          await refreshRun(client, eventClient, options);
          const refreshMs = performance.now() - refreshStart;
          const walBytes = await walWritten(client, walBefore);
          const after = await functionTimes(client);
          const routines = new Map(
            [...after].map(([name, total]) => [name, total - (before.get(name) ?? 0)]),
          );
          before = after;
          runs.push({ minutes, events: inserted.rowCount ?? 0, insertMs, refreshMs, walBytes, routines });
          log(
            `run ${runs.length} (${minutes} min, to minute ${folded}): ${inserted.rowCount} events, ` +
              `refresh ${seconds(refreshMs)}, WAL ${megabytes(walBytes)}`,
          );
        }
      });
      const refresh = runs.map((run) => run.refreshMs);
      // What a minute of traffic costs to fold: under 60 s the runs keep up with the ingest.
      const perMinuteOfTraffic = runs.map((run) => run.refreshMs / run.minutes);
      // An event that arrives just after a run begins waits for the next run to begin and end.
      const lags = runs.map((run) => run.minutes * MINUTE + run.refreshMs);
      const inserts = runs.map((run) => run.insertMs);
      const wal = runs.map((run) => run.walBytes);
      const names = [...new Set(runs.flatMap((run) => [...run.routines.keys()]))]
        .map((name) => ({ name, times: runs.map((run) => run.routines.get(name) ?? 0) }))
        .filter((routine) => routine.times.some((t) => t > 0))
        .sort((a, b) => median(b.times) - median(a.times));
      // What a run is: the cron's two families at once, or refresh_derived() on one connection.
      const runName = options.serial ? "refresh_derived()" : "a run (the session and event families at once)";
      lines.push(
        `Sustained ingest on a copy of \`${options.source}\`: ${options.minutes} minutes at ` +
          `${options.rate.toLocaleString("en-US")} events/s (${perMinute.toLocaleString("en-US")} a minute, ` +
          "all projects), " +
          (options.interval === "follow"
            ? "each run's traffic the whole minutes the run before took (at least one), as the cron trigger " +
              "schedules runs that outlast its minute,"
            : `${options.interval === 1 ? "each minute" : `every ${options.interval} minutes`}`) +
          (options.serial
            ? " inserted in one statement and followed by `refresh_derived()` on one connection, "
            : options.stringsWithSessions
              ? " inserted in one statement and followed by `refresh_session_family()`, then " +
                "`refresh_session_strings()`, on one connection and at once `refresh_event_family()` on the " +
                "other (the strings beside the session family, as before migration 0105), "
              : " inserted in one statement and followed by a run as the cron trigger makes it: " +
                "`refresh_session_family()` on one connection and at once `refresh_event_family()`, then " +
                "`refresh_session_strings()` (the sessions committed by then), on the other, ") +
          `after a lead-in of ${options.lead} minutes of the same traffic inserted and refreshed untimed.`,
        "",
        "| | p50 | max |",
        "|---|--:|--:|",
        `| ${runName} (target < 10 s) | ${seconds(median(refresh))} | ${seconds(Math.max(...refresh))} |`,
        `| ${runName} per minute of traffic (the runs keep up below 60 s) | ${seconds(median(perMinuteOfTraffic))} | ${seconds(Math.max(...perMinuteOfTraffic))} |`,
        `| an event's wait to be folded, at most (the run's minutes and its time) | ${seconds(median(lags))} | ${seconds(Math.max(...lags))} |`,
        `| the run's insert | ${seconds(median(inserts))} | ${seconds(Math.max(...inserts))} |`,
        `| WAL written by the run (the server's, as the run saw it) | ${megabytes(median(wal))} | ${megabytes(Math.max(...wal))} |`,
        ...names.map(
          (routine) =>
            `| \`${routine.name}\` (total time, nested calls included) | ${seconds(median(routine.times))} | ${seconds(Math.max(...routine.times))} |`,
        ),
        "",
        `Per run: ${runs.map((run) => `${run.minutes} min, ${run.events.toLocaleString("en-US")} events, ${seconds(run.refreshMs)}`).join("; ")}.`,
        "",
        "Storage after the replay:",
        "",
        ...(await storage(client)),
      );
    });
  } finally {
    if (!options.keep) {
      await withClient(options.adminUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS "${copy}" WITH (FORCE)`),
      );
    }
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  if (options.out !== undefined && machine !== undefined) {
    const header = [
      "# Refresh cost (`npm run bench:refresh`, issue 15)",
      "",
      `Run ${began.toISOString()} – ${new Date().toISOString()}: \`npm run bench:refresh -- ${process.argv.slice(2).join(" ")}\`.`,
      "",
      ...machineLines(machine, "a run's two families run at once"),
      "",
    ];
    await writeFile(options.out, `${[...header, ...lines].join("\n")}\n`);
  }
  log(`done (${path.relative(ROOT, process.cwd()) || "."})`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:refresh: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
