import {
  ENDPOINTS,
  type Endpoint,
  FILTER_KINDS,
  FILTER_TITLES,
  type FilterKind,
  isSessionEndpoint,
  WINDOW_DAYS,
  type WindowDays,
} from "./cases";
import type { DataFacts, DataSetMarker, MachineFacts } from "./database";
import { fmtMs, type TimingSummary } from "./measure";

/** Everything one benchmark run found; the report is rendered from it (also from a partial one). */

export interface CellResult {
  uncached?: TimingSummary;
  cached?: TimingSummary & { misses: number };
  baseline?: TimingSummary;
  /** Set when every baseline run hit the statement timeout (or a shorter window already did). */
  baselineTimeoutMs?: number;
  /** `meta.approximate` of /metrics answers, when not empty. */
  approximate?: string[];
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
  };
  database: string;
  reused?: boolean;
  marker?: DataSetMarker;
  data?: DataFacts;
  machine?: MachineFacts;
  wrangler?: string;
  /** A request that reaches the Worker but neither authentication nor the database. */
  floor?: TimingSummary;
  cells: Map<string, CellResult>;
  stream?: StreamResult;
  streamSkipped?: string;
  depth?: DepthResult;
  depthSkipped?: string;
  visitors: VisitorCheck[];
  notes: string[];
}

export const cellKey = (endpoint: Endpoint, days: WindowDays | undefined, filter: FilterKind): string =>
  `${endpoint.id}|${days ?? "-"}|${filter}`;

const fmtInt = (n: number): string => Math.round(n).toLocaleString("en-US");

function errorsText(summary: TimingSummary | undefined): string {
  if (!summary) return "";
  const parts = Object.entries(summary.errors).map(([reason, count]) => `${count}× ${reason}`);
  return parts.join("; ");
}

/** Baseline p50 / our uncached p50; a timed-out baseline gives a lower bound (timeout / ours). */
function ratio(cell: CellResult | undefined): number | undefined {
  const base = cell?.baseline?.p50 ?? cell?.baselineTimeoutMs;
  const ours = cell?.uncached?.p50;
  if (base === undefined || ours === undefined || ours <= 0) return undefined;
  return base / ours;
}

const fmtFactor = (r: number): string =>
  r >= 100 ? `${Math.round(r)}×` : r >= 10 ? `${r.toFixed(0)}×` : `${r.toFixed(1)}×`;

function fmtRatio(r: number | undefined, cell?: CellResult): string {
  if (r === undefined) return "–";
  return cell?.baseline?.p50 === undefined && cell?.baselineTimeoutMs !== undefined
    ? `≥ ${fmtFactor(r)}`
    : fmtFactor(r);
}

const fmtBaseline = (cell: CellResult, value: number | undefined): string =>
  value === undefined && cell.baselineTimeoutMs !== undefined
    ? `> ${fmtMs(cell.baselineTimeoutMs)}`
    : fmtMs(value);

interface Verdict {
  what: string;
  target: string;
  measured: string;
  met: boolean | undefined;
}

interface Extreme {
  value: number;
  where: string;
}

/** The largest (or smallest) value over the cells, with the cell it came from. */
function extreme(
  pick: (cell: CellResult) => number | undefined,
  endpoints: readonly Endpoint[],
  windows: readonly (WindowDays | undefined)[],
  filters: readonly FilterKind[],
  results: BenchResults,
  largest = true,
): Extreme | undefined {
  let best: Extreme | undefined;
  for (const endpoint of endpoints) {
    for (const days of windows) {
      for (const filter of filters) {
        const cell = results.cells.get(cellKey(endpoint, days, filter));
        const value = cell ? pick(cell) : undefined;
        if (value === undefined) continue;
        if (!best || (largest ? value > best.value : value < best.value)) {
          const window = days !== undefined ? ` ${days}d` : "";
          const where = `${endpoint.label}${window}${filter !== "none" ? ` (${filter} filter)` : ""}`;
          best = { value, where };
        }
      }
    }
  }
  return best;
}

/** Cells of `endpoints` × windows × filters without any successful uncached run (no target met there). */
function failedCells(
  endpoints: readonly Endpoint[],
  windows: readonly WindowDays[],
  filters: readonly FilterKind[],
  results: BenchResults,
): string[] {
  const failed: string[] = [];
  for (const endpoint of endpoints) {
    for (const days of windows) {
      for (const filter of filters) {
        const cell = results.cells.get(cellKey(endpoint, days, filter));
        if (cell?.uncached && cell.uncached.n === 0) failed.push(`${endpoint.label} ${days}d`);
      }
    }
  }
  return failed;
}

function verdicts(results: BenchResults): Verdict[] {
  const session = ENDPOINTS.filter(isSessionEndpoint);
  const live = ENDPOINTS.filter((e) => e.kind === "live");
  const charts = ENDPOINTS.filter((e) => e.kind === "charts");
  const out: Verdict[] = [];
  const at = (x: Extreme | undefined, fmt: (n: number) => string): string =>
    x ? `${fmt(x.value)} (worst: ${x.where})` : "not measured";
  const check = (
    x: Extreme | undefined,
    ok: (n: number) => boolean,
    failed: string[] = [],
  ): boolean | undefined => (failed.length > 0 ? false : x ? ok(x.value) : undefined);

  const p50at30 = extreme((c) => c.uncached?.p50, session, [30], ["none"], results);
  const p95at30 = extreme((c) => c.uncached?.p95, session, [30], ["none"], results);
  const speedup = extreme((c) => ratio(c), session, [30], ["none"], results, false);
  const failed30 = failedCells(session, [30], ["none"], results);
  out.push({
    what: "/metrics, /pages, every breakdown, uncached, 30 days: p50",
    target: "≤ 50 ms",
    measured: at(p50at30, fmtMs) + (failed30.length ? `; failed: ${failed30.join(", ")}` : ""),
    met: check(p50at30, (v) => v <= 50, failed30),
  });
  out.push({
    what: "… p95",
    target: "≤ 150 ms",
    measured: at(p95at30, fmtMs),
    met: check(p95at30, (v) => v <= 150, failed30),
  });
  out.push({
    what: "… speed-up over the plain-SQL baseline (p50 / p50)",
    target: "≥ 100×",
    measured: speedup ? `${fmtFactor(speedup.value)} (least: ${speedup.where})` : "not measured",
    met: check(speedup, (v) => v >= 100),
  });
  const p50at90 = extreme((c) => c.uncached?.p50, session, [90], ["none"], results);
  const failed90 = failedCells(session, [90], ["none"], results);
  out.push({
    what: "the same, 90 days: p50",
    target: "≤ 80 ms",
    measured: at(p50at90, fmtMs),
    met: check(p50at90, (v) => v <= 80, failed90),
  });
  const cached = extreme((c) => c.cached?.p50, session, WINDOW_DAYS, FILTER_KINDS, results);
  out.push({
    what: "any of them, cached (every window and filter): p50",
    target: "≤ 10 ms",
    measured: at(cached, fmtMs),
    met: check(cached, (v) => v <= 10),
  });
  const liveP50 = extreme((c) => c.uncached?.p50, live, [undefined], ["none"], results);
  out.push({
    what: "/live, uncached: p50",
    target: "≤ 20 ms",
    measured: at(liveP50, fmtMs),
    met: check(liveP50, (v) => v <= 20),
  });
  const chartsP50 = extreme((c) => c.uncached?.p50, charts, [30], ["none"], results);
  out.push({
    what: "/export/charts, 30 days by day, one breakdown, uncached: p50",
    target: "≤ 150 ms",
    measured: at(chartsP50, fmtMs),
    met: check(chartsP50, (v) => v <= 150, failedCells(charts, [30], ["none"], results)),
  });
  const uncovered = extreme((c) => c.uncached?.p95, session, [30], ["event"], results);
  const failedUncovered = failedCells(session, [30], ["event"], results);
  out.push({
    what: "uncovered filter (event field), 30 days, uncached: p95",
    target: "≤ 3 s",
    measured:
      at(uncovered, fmtMs) + (failedUncovered.length ? `; failed: ${failedUncovered.join(", ")}` : ""),
    met: check(uncovered, (v) => v <= 3_000, failedUncovered),
  });
  const stream = results.stream;
  const rate = stream && stream.seconds > 0 ? stream.events / stream.seconds : undefined;
  out.push({
    what: "/export/events NDJSON stream",
    target: "≥ 100,000 events/s",
    measured:
      rate !== undefined && stream
        ? `${fmtInt(rate)} events/s (${fmtInt(stream.events)} events in ${stream.seconds.toFixed(1)} s)`
        : (results.streamSkipped ?? "not measured"),
    met: rate !== undefined && stream ? rate >= 100_000 && stream.events === stream.expected : undefined,
  });
  const depth = results.depth;
  const depthRatio =
    depth?.first.p50 !== undefined && depth.deep.p50 !== undefined && depth.first.p50 > 0
      ? depth.deep.p50 / depth.first.p50
      : undefined;
  out.push({
    what: `cursor page at depth ${depth ? fmtInt(depth.depth) : "5,000,000"} vs the first page (p50)`,
    target: "≤ 1.5×",
    measured:
      depth && depthRatio !== undefined
        ? `${depthRatio.toFixed(2)}× (${fmtMs(depth.deep.p50)} vs ${fmtMs(depth.first.p50)})`
        : (results.depthSkipped ?? "not measured"),
    met: depthRatio !== undefined ? depthRatio <= 1.5 : undefined,
  });
  const worstVisitors = results.visitors.reduce<VisitorCheck | undefined>((worst, check) => {
    const error = (v: VisitorCheck) => (v.exact === 0 ? 0 : Math.abs(v.api - v.exact) / v.exact);
    return !worst || error(check) > error(worst) ? check : worst;
  }, undefined);
  const visitorError =
    worstVisitors && worstVisitors.exact > 0
      ? (100 * (worstVisitors.api - worstVisitors.exact)) / worstVisitors.exact
      : worstVisitors
        ? 0
        : undefined;
  const anyApproximate = results.visitors.some((v) => v.approximate);
  let visitorsText = "not measured";
  if (visitorError !== undefined && worstVisitors) {
    const sign = visitorError >= 0 ? "+" : "";
    const counts = `${fmtInt(worstVisitors.api)} vs ${fmtInt(worstVisitors.exact)}`;
    const how = anyApproximate
      ? "from sketches where flagged approximate"
      : "answered exactly (windows below the sketch threshold)";
    visitorsText = `${sign}${visitorError.toFixed(2)} % (worst: ${worstVisitors.days}d, ${counts}); ${how}`;
  }
  out.push({
    what: "unique visitors (/metrics) vs the exact count",
    target: "within ±2 %",
    measured: visitorsText,
    met: visitorError !== undefined ? Math.abs(visitorError) <= 2 : undefined,
  });
  return out;
}

const metText = (met: boolean | undefined): string => (met === undefined ? "–" : met ? "met" : "**missed**");

function cellsTable(results: BenchResults, filter: FilterKind): string[] {
  const lines = [
    `### ${FILTER_TITLES[filter]}`,
    "",
    "| endpoint | window | uncached p50 | uncached p95 | cached p50 | cached p95 | baseline p50 | " +
      "baseline p95 | speed-up | runs (ours / cached / baseline) | notes |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|",
  ];
  let any = false;
  for (const endpoint of ENDPOINTS) {
    const windows: readonly (WindowDays | undefined)[] = endpoint.windowed ? WINDOW_DAYS : [undefined];
    if (!endpoint.windowed && filter !== "none") continue;
    for (const days of windows) {
      const cell = results.cells.get(cellKey(endpoint, days, filter));
      if (!cell) continue;
      any = true;
      const notes: string[] = [];
      const uncachedErrors = errorsText(cell.uncached);
      if (uncachedErrors) notes.push(`ours: ${uncachedErrors}`);
      const cachedErrors = errorsText(cell.cached);
      if (cachedErrors) notes.push(`cached: ${cachedErrors}`);
      if (cell.cached && cell.cached.misses > 0) notes.push(`${cell.cached.misses} cache misses`);
      const baselineErrors = errorsText(cell.baseline);
      if (baselineErrors) notes.push(`baseline: ${baselineErrors}`);
      if (cell.approximate?.length) notes.push(`approximate: ${cell.approximate.join(", ")}`);
      const runs = [cell.uncached?.n, endpoint.cached ? cell.cached?.n : undefined, cell.baseline?.n]
        .map((n) => (n === undefined ? "–" : String(n)))
        .join(" / ");
      lines.push(
        `| ${endpoint.label} | ${days === undefined ? "last 5 min" : `${days}d`} | ` +
          `${fmtMs(cell.uncached?.p50)} | ` +
          `${fmtMs(cell.uncached?.p95)} | ${endpoint.cached ? fmtMs(cell.cached?.p50) : "n/a"} | ` +
          `${endpoint.cached ? fmtMs(cell.cached?.p95) : "n/a"} | ` +
          `${fmtBaseline(cell, cell.baseline?.p50)} | ` +
          `${fmtBaseline(cell, cell.baseline?.p95)} | ${fmtRatio(ratio(cell), cell)} | ${runs} | ` +
          `${notes.join("; ")} |`,
      );
    }
  }
  if (!any) lines.push("| (not measured) | | | | | | | | | | |");
  lines.push("");
  return lines;
}

export function renderReport(results: BenchResults): string {
  const o = results.options;
  const lines: string[] = [];
  lines.push("# Benchmark report (`npm run bench`, issue 5)");
  lines.push("");
  if (results.interrupted)
    lines.push(`> **Partial report**: the run was interrupted (${results.interrupted}).`, "");
  lines.push(
    `Run ${results.startedAt.toISOString()}` +
      `${results.finishedAt ? ` – ${results.finishedAt.toISOString()}` : ""}` +
      `${o.smoke ? " (smoke profile)" : ""}.`,
  );
  lines.push("");
  lines.push("## Machine and data set");
  lines.push("");
  const m = results.machine;
  if (m) {
    lines.push(`- Machine: ${m.cpus} vCPUs (${m.cpuModel}), ${m.memoryGiB} GiB RAM`);
    lines.push(
      `- Node ${m.node}, PostgreSQL ${m.postgres} (${m.postgresSettings})` +
        `${results.wrangler ? `, wrangler ${results.wrangler}` : ""}`,
    );
  }
  if (results.floor) {
    lines.push(
      "- Fixed cost of one request through `wrangler dev` (a 404 that reaches neither authentication " +
        `nor the database): p50 ${fmtMs(results.floor.p50)}, p95 ${fmtMs(results.floor.p95)} ` +
        `(${results.floor.n} runs)`,
    );
  }
  lines.push(
    `- Data set: \`--events ${o.events} --days ${o.days} --seed ${o.seed}\` ` +
      `in database \`${results.database}\`` +
      (results.reused === undefined ? "" : results.reused ? " (reused)" : " (loaded by this run)"),
  );
  if (results.marker) {
    lines.push(
      `- Loaded ${results.marker.loadedAt} in ${results.marker.loadSeconds} s; ` +
        `traffic ends ${results.marker.now}; ${fmtInt(results.marker.sessions)} sessions, ` +
        `${fmtInt(results.marker.profiles)} profiles in all projects`,
    );
  }
  const d = results.data;
  if (d) {
    lines.push(
      `- Project \`demo\` (measured): ${fmtInt(d.projectEvents)} events, ` +
        `${fmtInt(d.projectSessions)} sessions, ` +
        `${d.first.toISOString()} – ${d.last.toISOString()}; all projects: ${fmtInt(d.totalEvents)} events`,
    );
  }
  lines.push(
    "- Method: through `wrangler dev` (Worker, Neon driver, local WebSocket relay, Postgres) on loopback " +
      "with the demo read client and rate limiting off. Each measurement takes up to " +
      `${o.runs} runs and stops early after ${o.budgetSeconds} s (at least one run); p50/p95 are ` +
      "nearest-rank over the successful runs. Uncached: " +
      "`Cache-Control: no-cache`; cached: one warming request, then hits. Windows are whole UTC days " +
      "(`startDate`/`endDate`, `timezone=UTC`) ending with the data's last complete day. Baseline: one " +
      "plain SQL query per endpoint over `events` " +
      "(index `(project_id, created_at, id)`), through `pg` on the same database in the same run, with a " +
      `${o.baselineTimeoutSeconds} s statement timeout (a baseline that hits it is shown as ` +
      "`> timeout`, its longer windows are not run, and its speed-up is a lower bound); " +
      "speed-up = baseline p50 / our uncached p50.",
  );
  lines.push("");
  lines.push("## Targets of issue 5");
  lines.push("");
  lines.push("| What | Target | Measured | Met |");
  lines.push("|---|---|---|---|");
  for (const v of verdicts(results))
    lines.push(`| ${v.what} | ${v.target} | ${v.measured} | ${metText(v.met)} |`);
  lines.push("");
  if (o.events < 10_000_000 || o.smoke) {
    lines.push(
      `The targets are stated for 10 million events; this run used ${fmtInt(o.events)}, so its verdicts ` +
        "are indicative only.",
    );
    lines.push("");
  }
  lines.push("## Export");
  lines.push("");
  if (results.stream) {
    const s = results.stream;
    lines.push(
      `- NDJSON stream: ${fmtInt(s.events)} events (expected ${fmtInt(s.expected)}) ` +
        `in ${s.seconds.toFixed(2)} s = ` +
        `${fmtInt(s.events / s.seconds)} events/s; first byte after ${fmtMs(s.firstByteMs)}` +
        (s.start ? ` (\`start=${s.start}\`: the newest 1,000,000 events)` : " (all events of the project)") +
        `; the median of ${s.runs.length} runs (` +
        s.runs.map((run) => `${fmtInt(run.events / run.seconds)}/s`).join(", ") +
        "), read through node:http",
    );
  } else {
    lines.push(`- NDJSON stream: ${results.streamSkipped ?? "not measured"}`);
  }
  if (results.depth) {
    const dp = results.depth;
    const depthErrors = [errorsText(dp.first), errorsText(dp.deep)].filter(Boolean).join("; ");
    lines.push(
      `- JSON page of 50: first page p50 ${fmtMs(dp.first.p50)} / p95 ${fmtMs(dp.first.p95)} ` +
        `(${dp.first.n} runs); cursor page at depth ${fmtInt(dp.depth)} p50 ${fmtMs(dp.deep.p50)} / ` +
        `p95 ${fmtMs(dp.deep.p95)} (${dp.deep.n} runs)` +
        `${depthErrors ? `; errors: ${depthErrors}` : ""}`,
    );
  } else {
    lines.push(`- Cursor depth: ${results.depthSkipped ?? "not measured"}`);
  }
  lines.push("");
  if (results.visitors.length > 0) {
    lines.push("## Exactness");
    lines.push("");
    lines.push(
      "| window | unique visitors (API) | exact (sessions table) | difference | flagged approximate |",
    );
    lines.push("|---|--:|--:|--:|---|");
    for (const v of results.visitors) {
      const diff = v.exact === 0 ? 0 : (100 * (v.api - v.exact)) / v.exact;
      lines.push(
        `| ${v.days}d | ${fmtInt(v.api)} | ${fmtInt(v.exact)} | ` +
          `${diff >= 0 ? "+" : ""}${diff.toFixed(2)} % | ` +
          `${v.approximate ? "yes" : "no"} |`,
      );
    }
    lines.push("");
  }
  lines.push("## Every measurement");
  lines.push("");
  for (const filter of FILTER_KINDS) lines.push(...cellsTable(results, filter));
  if (results.notes.length > 0) {
    lines.push("## Notes");
    lines.push("");
    for (const note of results.notes) lines.push(`- ${note}`);
    lines.push("");
  }
  return lines.join("\n");
}
