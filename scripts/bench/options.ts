/**
 * Command line of `npm run bench` (issues 5 and 15). Kept apart from the runner so the defaults and
 * the smoke profile are visible in one place.
 */

/**
 * Parts of a run: `core` the endpoint × window × filter matrix of issue 5 with its baseline,
 * `filtered` the filtered section of issue 15, `export` the NDJSON stream and the cursor depth,
 * `routes` the routes of issue 17 (discovery, listings, OpenPanel's page and traffic routes).
 */
export const BENCH_SECTIONS = ["core", "filtered", "export", "routes"] as const;
export type BenchSection = (typeof BENCH_SECTIONS)[number];

export interface BenchOptions {
  events: number;
  days: number;
  seed: number;
  /** Timed runs per measurement (cell). */
  runs: number;
  /** A cell stops taking runs once it has used this much time (slow baselines would take hours). */
  budgetSeconds: number;
  /** statement_timeout of a baseline query; a baseline that hits it is reported as a lower bound. */
  baselineTimeoutSeconds: number;
  database: string;
  /** Admin connection (any database on the server); the bench database lives beside it. */
  adminUrl: string;
  smoke: boolean;
  /** Reload the data set even when the marker says it is there. */
  reload: boolean;
  out: string;
  sections: readonly BenchSection[];
  /** Load (or check) and migrate the data set, then stop. */
  loadOnly: boolean;
  /** A load stops (and rolls back) when the server's disk has less than this many GiB free. */
  minFreeGb: number;
  /** REPORT.json of an earlier run, for the growth columns. */
  compare: string | undefined;
  /** A simulated round trip between the Worker and the database, in ms (the relay's; 0: none). */
  dbRoundTripMs: number;
  /** The filtered section's rounds: each cell takes ceil(runs / rounds) runs in each (1 with --smoke). */
  rounds: number;
  /** A load's slices of hours, each committed and derived before the next (seedDatabase). */
  slices: number;
}

/** Past this many events a load goes in slices of about this many, unless --slices says otherwise. */
export const EVENTS_PER_SLICE = 5_000_000;
const SLICED_FROM = 10_000_000;

export const BENCH_USAGE = `usage: npm run bench -- [options]
  --events <n>              events to load (default 10,000,000; 20,000 with --smoke)
  --days <d>                days they span, ending now (default 90)
  --seed <s>                seed of the generator (default 1)
  --runs <k>                timed runs per measurement (default 7; 2 with --smoke)
  --budget <s>              stop a measurement after this many seconds, keeping one run (default 10; in
                            the filtered section's rounds, a cell's share in each round)
  --baseline-timeout <s>    statement timeout of one plain-SQL baseline query (default 30); a timed-out
                            baseline is reported as a lower bound, and its longer windows are skipped
  --database <name>         database to use or create (default bench_<events>_<days>_<seed>)
  --reload                  load the data set again even when it is already there
  --smoke                   small and quick (for CI): skips the 1M-event stream and the depth test, and
                            measures the filtered section over 30 days on fewer endpoints
  --sections <list>         parts to run, comma-separated: core (issue 5's endpoint matrix), filtered
                            (issue 15's filters, values picked from the data), export (stream, cursor
                            depth), routes (issue 17's routes beside plain SQL); default all four
  --load-only               load (or check) and migrate the data set, then stop
  --min-free-gb <g>         stop a load, rolling it back, when the disk of the database's server (when it
                            is on this machine) has less than this free (default 5)
  --compare <file.json>     an earlier run's results (the .json beside its report): adds its p50 and the
                            growth (this run / that run) per case and per target of issue 15
  --rounds <r>              the filtered section visits its cells in r rounds, each taking ceil(runs / r) of a
                            cell's runs, so every cell meets the same minutes of the machine (default 3;
                            1 with --smoke)
  --slices <k>              load the data set in k slices of hours, each committed and derived before the
                            next, which bounds the disk a first build takes (default 1 up to 10,000,000
                            events, above that one slice per 5,000,000)
  --db-rtt <ms>             simulate a Worker this far from its database: the relay delays every message
                            by half of this round trip each way and a new connection by three (default 0)
  --out <file>              report file (default scripts/bench/REPORT.md); the results go beside it as
                            JSON (REPORT.json)
environment: BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres)`;

export class BenchUsageError extends Error {}

const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";

function integer(text: string, flag: string, min: number): number {
  const n = Number(text.replaceAll("_", "").replaceAll(",", ""));
  if (!Number.isSafeInteger(n) || n < min) throw new BenchUsageError(`${flag} must be an integer ≥ ${min}`);
  return n;
}

function positive(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new BenchUsageError(`${flag} must be a positive number`);
  return n;
}

export function parseBenchOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const given: Partial<BenchOptions> = {};
  let smoke = false;
  let reload = false;
  let loadOnly = false;
  let sections: BenchSection[] | undefined;
  let compare: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [flag = "", inline] = arg.startsWith("--") && arg.includes("=") ? arg.split(/=(.*)/s, 2) : [arg];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new BenchUsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--events":
        given.events = integer(value(), flag, 1);
        break;
      case "--days":
        given.days = positive(value(), flag);
        break;
      case "--seed":
        given.seed = integer(value(), flag, Number.MIN_SAFE_INTEGER);
        break;
      case "--runs":
        given.runs = integer(value(), flag, 1);
        break;
      case "--budget":
        given.budgetSeconds = positive(value(), flag);
        break;
      case "--baseline-timeout":
        given.baselineTimeoutSeconds = positive(value(), flag);
        break;
      case "--database":
        given.database = value();
        break;
      case "--out":
        given.out = value();
        break;
      case "--smoke":
        smoke = true;
        break;
      case "--reload":
        reload = true;
        break;
      case "--load-only":
        loadOnly = true;
        break;
      case "--min-free-gb":
        given.minFreeGb = positive(value(), flag);
        break;
      case "--compare":
        compare = value();
        break;
      case "--sections":
        sections = parseSections(value(), flag);
        break;
      case "--rounds":
        given.rounds = integer(value(), flag, 1);
        break;
      case "--slices":
        given.slices = integer(value(), flag, 1);
        break;
      case "--db-rtt":
        given.dbRoundTripMs = integer(value(), flag, 0);
        break;
      default:
        throw new BenchUsageError(`unknown argument ${arg}`);
    }
  }
  const events = given.events ?? (smoke ? 20_000 : 10_000_000);
  const days = given.days ?? 90;
  const seed = given.seed ?? 1;
  // The name carries the data set, so another size never reuses (or overwrites) this one.
  const database =
    given.database ?? `bench_${events}_${String(days).replace(".", "_")}_${seed}`.replace("-", "m");
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) {
    throw new BenchUsageError("--database must be a lower-case identifier (letters, digits, _)");
  }
  const adminUrl = env.BENCH_ADMIN_URL?.trim() || DEFAULT_ADMIN_URL;
  return {
    events,
    days,
    seed,
    runs: given.runs ?? (smoke ? 2 : 7),
    budgetSeconds: given.budgetSeconds ?? 10,
    baselineTimeoutSeconds: given.baselineTimeoutSeconds ?? 30,
    database,
    adminUrl,
    smoke,
    reload,
    out: given.out ?? "scripts/bench/REPORT.md",
    sections: sections ?? BENCH_SECTIONS,
    loadOnly,
    minFreeGb: given.minFreeGb ?? 5,
    compare,
    dbRoundTripMs: given.dbRoundTripMs ?? 0,
    rounds: given.rounds ?? (smoke ? 1 : 3),
    slices: given.slices ?? (events > SLICED_FROM ? Math.ceil(events / EVENTS_PER_SLICE) : 1),
  };
}

function parseSections(text: string, flag: string): BenchSection[] {
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(BENCH_SECTIONS as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new BenchUsageError(`${flag} takes a comma-separated list of ${BENCH_SECTIONS.join(", ")}`);
  }
  // In the order of a run, whatever the order given.
  return BENCH_SECTIONS.filter((section) => names.includes(section));
}

/** Where the results go as JSON: beside the report, `.json` instead of `.md`. */
export const resultsJsonPath = (reportFile: string): string =>
  reportFile.endsWith(".md") ? `${reportFile.slice(0, -3)}.json` : `${reportFile}.json`;

/** The admin URL pointed at another database on the same server. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
