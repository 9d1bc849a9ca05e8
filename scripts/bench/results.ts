import type { FilterKind, WindowDays } from "./cases";
import type { DataFacts, DataSetMarker, MachineFacts } from "./database";
import type { FilterCase, FilterPicks } from "./filters";
import type { TimingSummary } from "./measure";
import type { BenchSection } from "./options";
import type { RouteResult } from "./routes";

/** Everything one benchmark run found; the report and REPORT.json are rendered from it (also a partial one). */

export interface CellResult {
  uncached?: TimingSummary;
  cached?: TimingSummary & { misses: number };
  baseline?: TimingSummary;
  /** Set when every baseline run hit the statement timeout (or a shorter window already did). */
  baselineTimeoutMs?: number;
  /** `meta.approximate` of /metrics answers, when not empty. */
  approximate?: string[];
  /** `total_sessions` of a /metrics answer: how many sessions the filter really kept. */
  sessions?: number;
}

/**
 * One round of the filtered section: every cell in turn takes its share of the runs, so each cell's
 * runs are spread over the whole section and meet the same states of the machine (its second
 * core comes and goes within minutes) rather than one stretch of them each.
 */
export interface FilteredRound {
  startedAt: string;
  /** Two CPU probes side by side before the round (MachineFacts.cpuPairProbeSeconds, one pair). */
  cpuPairProbeSeconds: number;
}

export interface StreamRun {
  events: number;
  seconds: number;
  firstByteMs: number;
}

export interface StreamResult extends StreamRun {
  expected: number;
  start: string | undefined;
  /** Every run, in run order; the fields above are those of the median run (by time). */
  runs: StreamRun[];
}

export interface DepthResult {
  depth: number;
  first: TimingSummary;
  deep: TimingSummary;
}

export interface VisitorCheck {
  days: WindowDays;
  api: number;
  exact: number;
  approximate: boolean;
}

/** A case of an earlier run (`--compare`), by case id. */
export interface ComparedCase {
  p50?: number;
  p95?: number;
  cachedP50?: number;
  baselineP50?: number;
  /** The filter it measured, written out (values may differ between data sets). */
  filter?: string;
}

export interface ComparedRun {
  file: string;
  startedAt: string;
  events: number;
  projectEvents?: number;
  cases: Map<string, ComparedCase>;
}

export interface BenchResults {
  startedAt: Date;
  finishedAt?: Date;
  interrupted?: string;
  options: {
    events: number;
    days: number;
    seed: number;
    runs: number;
    budgetSeconds: number;
    baselineTimeoutSeconds: number;
    smoke: boolean;
    sections: readonly BenchSection[];
    /** A simulated round trip between the Worker and the database, ms (0: none). */
    dbRoundTripMs: number;
    /** The filtered section's rounds: each visits every cell in turn (see FilteredRound). */
    rounds: number;
  };
  database: string;
  reused?: boolean;
  /** Seconds of the VACUUM (ANALYZE) before measuring. */
  settleSeconds?: number;
  marker?: DataSetMarker;
  data?: DataFacts;
  machine?: MachineFacts;
  wrangler?: string;
  /** A request that reaches the Worker but neither authentication nor the database. */
  floor?: TimingSummary;
  /** The filters picked from the data, for the core matrix and the filtered section. */
  picks?: FilterPicks;
  /** The filtered section's rounds, in order, each with the machine's two-process probe before it. */
  filteredRounds?: FilteredRound[];
  /** Case id → cell (see `caseId`). */
  cells: Map<string, CellResult>;
  stream?: StreamResult;
  streamSkipped?: string;
  depth?: DepthResult;
  depthSkipped?: string;
  visitors: VisitorCheck[];
  /** The routes of issue 17 (scripts/bench/routes.ts). */
  routes?: RouteResult[];
  routesSkipped?: string;
  compare?: ComparedRun;
  notes: string[];
}

/** The picked filter case of the core matrix's filter kind (undefined: none picked, or not yet). */
export function coreFilter(results: BenchResults, kind: Exclude<FilterKind, "none">): FilterCase | undefined {
  const cases = results.picks?.cases ?? [];
  if (kind === "event") return cases.find((c) => c.kind === "path");
  return cases.find((c) => c.id === "one:country") ?? cases.find((c) => c.kind === "one");
}

/** The filter id (first part of a case id) of a core filter kind. */
export function coreFilterId(results: BenchResults, kind: FilterKind): string | undefined {
  return kind === "none" ? "none" : coreFilter(results, kind)?.id;
}
