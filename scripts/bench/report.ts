import {
  CHART_BREAKDOWN,
  CHART_SEGMENT_ENDPOINTS,
  ENDPOINTS,
  FILTER_KINDS,
  type FilterKind,
  isSessionEndpoint,
  WINDOW_DAYS,
  type WindowDays,
} from "./cases";
import type { MachineFacts } from "./database";
import { gib } from "./disk-guard";
import { filteredRunsPerRound, isChartCase } from "./filtered";
import { describeCase } from "./filters";
import { fmtMs } from "./measure";
import {
  atWorst,
  type CellRef,
  cellRefs,
  cellsTable,
  errorsText,
  extreme,
  failedCells,
  fmtFactor,
  fmtInt,
  judge,
  mdCell,
  metText,
  ratio,
  type Verdict,
} from "./report-cells";
import { issue15Sections } from "./report-issue15";
import { routesSection } from "./report-routes";
import { type BenchResults, coreFilter, coreFilterId, type VisitorCheck } from "./results";

/** The Markdown report of a run: machine and data, the targets of issues 5 and 15, every measurement. */

/** The core matrix's cells of these filter kinds (a kind without a picked filter has none). */
function coreRefs(
  results: BenchResults,
  kinds: readonly FilterKind[],
  endpoints: readonly Parameters<typeof cellRefs>[1][number][],
  windows: readonly (WindowDays | undefined)[],
): CellRef[] {
  const filters = kinds.flatMap((kind) => {
    const id = coreFilterId(results, kind);
    return id === undefined ? [] : [{ id, name: kind === "none" ? "" : ` (${kind} filter)` }];
  });
  return cellRefs(filters, endpoints, windows);
}

function verdicts(results: BenchResults): Verdict[] {
  const session = ENDPOINTS.filter(isSessionEndpoint);
  const live = ENDPOINTS.filter((e) => e.kind === "live");
  const charts = ENDPOINTS.filter((e) => e.kind === "charts");
  const out: Verdict[] = [];
  const at = atWorst;
  const check = judge;
  const refs = (
    endpoints: typeof session,
    windows: readonly (WindowDays | undefined)[],
    kinds: readonly FilterKind[],
  ) => coreRefs(results, kinds, endpoints, windows);

  const p50at30 = extreme(results, refs(session, [30], ["none"]), (c) => c.uncached?.p50);
  const p95at30 = extreme(results, refs(session, [30], ["none"]), (c) => c.uncached?.p95);
  const speedup = extreme(results, refs(session, [30], ["none"]), (c) => ratio(c), false);
  const failed30 = failedCells(results, refs(session, [30], ["none"]));
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
  const p50at90 = extreme(results, refs(session, [90], ["none"]), (c) => c.uncached?.p50);
  const failed90 = failedCells(results, refs(session, [90], ["none"]));
  out.push({
    what: "the same, 90 days: p50",
    target: "≤ 80 ms",
    measured: at(p50at90, fmtMs),
    met: check(p50at90, (v) => v <= 80, failed90),
  });
  const cached = extreme(results, refs(session, WINDOW_DAYS, FILTER_KINDS), (c) => c.cached?.p50);
  out.push({
    what: "any of them, cached (every window and filter): p50",
    target: "≤ 10 ms",
    measured: at(cached, fmtMs),
    met: check(cached, (v) => v <= 10),
  });
  const liveP50 = extreme(results, refs(live, [undefined], ["none"]), (c) => c.uncached?.p50);
  out.push({
    what: "/live, uncached: p50",
    target: "≤ 20 ms",
    measured: at(liveP50, fmtMs),
    met: check(liveP50, (v) => v <= 20),
  });
  const chartsP50 = extreme(results, refs(charts, [30], ["none"]), (c) => c.uncached?.p50);
  out.push({
    what: "/export/charts, 30 days by day, one breakdown, uncached: p50",
    target: "≤ 150 ms",
    measured: at(chartsP50, fmtMs),
    met: check(chartsP50, (v) => v <= 150, failedCells(results, refs(charts, [30], ["none"]))),
  });
  const uncovered = extreme(results, refs(session, [30], ["event"]), (c) => c.uncached?.p95);
  const failedUncovered = failedCells(results, refs(session, [30], ["event"]));
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

const CORE_TITLES: Record<FilterKind, string> = {
  none: "no filter",
  session: "session-attribute filter",
  event: "event-field filter (uncovered in issue 5)",
};

/** The core matrix's tables, then one per filter case of the filtered section not shown there. */
function everyMeasurement(results: BenchResults): string[] {
  const lines: string[] = [];
  const all = [...ENDPOINTS, ...CHART_SEGMENT_ENDPOINTS];
  const shown = new Set<string>();
  if (results.options.sections.includes("core")) {
    for (const kind of FILTER_KINDS) {
      const filter = kind === "none" ? undefined : coreFilter(results, kind);
      const id = coreFilterId(results, kind);
      if (id === undefined) {
        lines.push(
          `### ${CORE_TITLES[kind]}`,
          "",
          "Not measured: no value was picked (see the filtered section).",
          "",
        );
        continue;
      }
      shown.add(id);
      const title = filter
        ? `${CORE_TITLES[kind]}: ${mdCell(describeCase(filter))} (\`${id}\`)`
        : CORE_TITLES[kind];
      lines.push(...cellsTable(results, title, id, ENDPOINTS, WINDOW_DAYS));
    }
  }
  for (const filter of results.picks?.cases ?? []) {
    if (shown.has(filter.id)) continue;
    const chart = isChartCase(filter)
      ? `, /export/charts of ${filter.chartEvent ?? "screen_view"} by ${CHART_BREAKDOWN} and day`
      : "";
    const title = `filtered: ${mdCell(describeCase(filter))}${chart} (\`${filter.id}\`)`;
    lines.push(...cellsTable(results, title, filter.id, all, WINDOW_DAYS));
  }
  return lines;
}

/**
 * The report's lines on the machine: its CPUs, memory and CPU probes (`why` says what in the run
 * uses both vCPUs at once, which the probe side by side shows), Node, Postgres and wrangler.
 */
export function machineLines(m: MachineFacts, why: string, wrangler?: string): string[] {
  const probe =
    m.cpuProbeSeconds === undefined
      ? ""
      : `; CPU probe (\`node -e\` of 3·10^8 additions in a top-level loop, best of 3) ${m.cpuProbeSeconds} s, 1.24 s on a fast day of this machine`;
  const pair =
    m.cpuPairProbeSeconds === undefined
      ? ""
      : `; two such processes side by side ${m.cpuPairProbeSeconds.map((s) => `${s} s`).join(", ")} (about the probe's time with both vCPUs there, up to twice it with one: ${why})`;
  return [
    `- Machine: ${m.cpus} vCPUs (${m.cpuModel}), ${m.memoryGiB} GiB RAM${probe}${pair}`,
    `- Node ${m.node}, PostgreSQL ${m.postgres} (${m.postgresSettings})${wrangler ? `, wrangler ${wrangler}` : ""}`,
  ];
}

export function renderReport(results: BenchResults): string {
  const o = results.options;
  const lines: string[] = [];
  lines.push("# Benchmark report (`npm run bench`, issues 5, 15 and 17)");
  lines.push("");
  if (results.interrupted)
    lines.push(`> **Partial report**: the run was interrupted (${results.interrupted}).`, "");
  lines.push(
    `Run ${results.startedAt.toISOString()}` +
      `${results.finishedAt ? ` – ${results.finishedAt.toISOString()}` : ""}` +
      `${o.smoke ? " (smoke profile)" : ""}; sections: ${o.sections.join(", ")}.`,
  );
  lines.push("");
  lines.push("## Machine and data set");
  lines.push("");
  if (results.machine) {
    lines.push(
      ...machineLines(results.machine, "filtered answers run two statements at once", results.wrangler),
    );
  }
  if (results.floor) {
    lines.push(
      "- Fixed cost of one request through `wrangler dev` (a 404 that reaches neither authentication " +
        `nor the database): p50 ${fmtMs(results.floor.p50)}, p95 ${fmtMs(results.floor.p95)} ` +
        `(${results.floor.n} runs)`,
    );
  }
  const rounds = results.filteredRounds ?? [];
  if (rounds.length > 0) {
    lines.push(
      `- The filtered section in ${rounds.length} round(s), each visiting every cell in turn and taking ` +
        `${filteredRunsPerRound(o)} of its uncached runs (so a cell's runs meet the same minutes of the ` +
        `machine as the others'); two CPU probes side by side before each round: ${rounds.map((r) => `${r.cpuPairProbeSeconds} s`).join(", ")}`,
    );
  }
  if (o.dbRoundTripMs > 0) {
    lines.push(
      `- **A Worker ${o.dbRoundTripMs} ms from its database** (\`--db-rtt ${o.dbRoundTripMs}\`): the relay delays every ` +
        "message by half of that round trip each way, and a new connection by three round trips",
    );
  }
  lines.push(
    `- Data set: \`--events ${o.events} --days ${o.days} --seed ${o.seed}\` ` +
      `in database \`${results.database}\`` +
      (results.reused === undefined ? "" : results.reused ? " (reused)" : " (loaded by this run)"),
  );
  if (results.marker) {
    lines.push(
      `- Loaded ${results.marker.loadedAt} in ${results.marker.loadSeconds} s` +
        (results.marker.slices === undefined
          ? ""
          : `, in ${results.marker.slices} slices of hours (each committed and folded in by the incremental refresh before the next)`) +
        (results.marker.peakDiskBytes === undefined
          ? "; "
          : ` (its peak on disk, as the free space of the server's file system fell: ${gib(results.marker.peakDiskBytes)}); `) +
        `traffic ends ${results.marker.now}; ${fmtInt(results.marker.sessions)} sessions, ` +
        `${fmtInt(results.marker.profiles)} profiles in all projects`,
    );
  }
  if (results.settleSeconds !== undefined) {
    lines.push(
      `- Settled before measuring: \`VACUUM (ANALYZE)\` of the database (what autovacuum does within ` +
        `minutes of a load or a migration) in ${results.settleSeconds} s`,
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
      "speed-up = baseline p50 / our uncached p50. Before the first cell, three rounds of unmeasured " +
      "requests (unfiltered, and under filters on values no data set holds, over one day before any " +
      "traffic) compile the Worker's paths and let the relay's pooled Postgres sessions open and plan " +
      "what filtered answers read, without reading a data page a cell reads.",
  );
  lines.push("");
  lines.push("## Targets of issue 5");
  lines.push("");
  if (o.sections.includes("core") || o.sections.includes("export")) {
    lines.push("| What | Target | Measured | Met |");
    lines.push("|---|---|---|---|");
    for (const v of verdicts(results))
      lines.push(`| ${v.what} | ${v.target} | ${v.measured} | ${metText(v.met)} |`);
  } else {
    lines.push("Not run (`--sections` without `core` and `export`).");
  }
  lines.push("");
  if ((o.events < 10_000_000 || o.smoke) && (o.sections.includes("core") || o.sections.includes("export"))) {
    lines.push(
      `The targets are stated for 10 million events; this run used ${fmtInt(o.events)}, so its verdicts ` +
        "are indicative only.",
    );
    lines.push("");
  }
  lines.push(...issue15Sections(results));
  lines.push(
    ...routesSection(
      results.routes,
      results.routesSkipped,
      results.options.baselineTimeoutSeconds * 1000,
      results.compare,
    ),
  );
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
  lines.push(...everyMeasurement(results));
  if (results.notes.length > 0) {
    lines.push("## Notes");
    lines.push("");
    for (const note of results.notes) lines.push(`- ${note}`);
    lines.push("");
  }
  return lines.join("\n");
}
