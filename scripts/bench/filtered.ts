import type pg from "pg";
import {
  apiRequest,
  benchWindow,
  CHART_SEGMENT_ENDPOINTS,
  ENDPOINTS,
  type Endpoint,
  isSessionEndpoint,
  type WindowDays,
} from "./cases";
import { cpuPairSeconds } from "./database";
import type { FilterCase } from "./filters";
import { type ApiClient, progress, summarize, type Timing } from "./measure";
import type { BenchOptions } from "./options";
import { type BenchResults, coreFilter } from "./results";
import { BaselineRunner, cachedRuns, cellOf, noteMetricsAnswer, reportCell, uncachedRuns } from "./run-cells";

/**
 * The filtered section of issue 15: each picked filter case (filters.ts) on /metrics, /pages and
 * breakdowns, and /export/charts with a filter and a breakdown per segment, over 30 and 90 days,
 * uncached and cached, with plain-SQL baselines at 30 days where the issue sets a speed-up target.
 */

/** The windows of the targets. */
export const FILTERED_WINDOWS: readonly WindowDays[] = [30, 90];
/** The breakdowns measured for the cases other than one `is` filter (a handful, of every kind). */
const FEW_BREAKDOWNS = ["country", "browser", "referrer_name", "city"];

const breakdown = (dimension: string): Endpoint | undefined =>
  ENDPOINTS.find((e) => e.id === `breakdown:${dimension}`);
const METRICS_AND_PAGES = ENDPOINTS.filter((e) => e.kind === "metrics" || e.kind === "pages");
const FEW = [
  ...METRICS_AND_PAGES,
  ...FEW_BREAKDOWNS.map(breakdown).filter((e): e is Endpoint => e !== undefined),
];

/** The cases measured on /export/charts (by the chart breakdown, in three segments). */
export const isChartCase = (filter: FilterCase): boolean =>
  filter.kind === "chart" || filter.kind === "chartTwo" || filter.kind === "chartProperty";

export interface FilteredCell {
  filter: FilterCase;
  endpoint: Endpoint;
  days: WindowDays;
  /** Also measure the plain-SQL baseline. */
  baseline: boolean;
}

/** The endpoints a filter case is measured on (in a full run; the smoke takes the few for all). */
export function filteredEndpoints(filter: FilterCase, smoke: boolean): readonly Endpoint[] {
  if (isChartCase(filter)) return CHART_SEGMENT_ENDPOINTS;
  if (filter.kind === "one" && !smoke) return ENDPOINTS.filter(isSessionEndpoint);
  return FEW;
}

/**
 * Every cell of the section. Baselines (30 days only): every endpoint for the core matrix's
 * session filter (its dimension stands for the others: a plain-SQL scan costs the same whichever
 * value it keeps), /metrics for every other case, every chart segment.
 */
export function planFiltered(results: BenchResults): FilteredCell[] {
  const smoke = results.options.smoke;
  // The smoke (CI) measures one window: the 90-day one adds nothing a smoke could judge.
  const windows: readonly WindowDays[] = smoke ? [30] : FILTERED_WINDOWS;
  const baselineDimension = coreFilter(results, "session")?.id;
  const cells: FilteredCell[] = [];
  for (const days of windows) {
    for (const filter of results.picks?.cases ?? []) {
      for (const endpoint of filteredEndpoints(filter, smoke)) {
        const baseline =
          days === 30 &&
          (isChartCase(filter) || endpoint.kind === "metrics" || filter.id === baselineDimension);
        cells.push({ filter, endpoint, days, baseline });
      }
    }
  }
  return cells;
}

/** A filtered cell's uncached runs in each round: its share of `runs`, rounded up. */
export const filteredRunsPerRound = (options: Pick<BenchOptions, "runs" | "rounds">): number =>
  Math.ceil(options.runs / Math.max(1, options.rounds));

export async function measureFiltered(
  client: ApiClient,
  db: pg.Client,
  options: BenchOptions,
  results: BenchResults,
  dataEnd: Date,
): Promise<void> {
  const plan = planFiltered(results);
  // Cells the core matrix measured (its session and event filters) are not measured again.
  const cells = plan.filter(
    ({ filter, endpoint, days }) => !cellOf(results, filter.id, endpoint, days).uncached,
  );
  const rounds = Math.max(1, options.rounds);
  const runsPerRound = filteredRunsPerRound(options);
  progress(
    `measuring the filtered section (${cells.length} cells, uncached and cached; ${rounds} round(s) of ${runsPerRound} run(s) a cell)…`,
  );
  const timings = new Map<FilteredCell, Timing>();
  // A cell's last answer of any round: a /metrics answer says what the filter kept.
  const lastBodies = new Map<FilteredCell, string>();
  results.filteredRounds = [];
  for (let round = 1; round <= rounds; round++) {
    const pair = await cpuPairSeconds();
    results.filteredRounds.push({ startedAt: new Date().toISOString(), cpuPairProbeSeconds: pair });
    progress(`round ${round} of ${rounds} (two CPU probes side by side: ${pair} s)`);
    for (const planned of cells) {
      const { filter, endpoint, days } = planned;
      const cell = cellOf(results, filter.id, endpoint, days);
      const request = apiRequest(endpoint, benchWindow(days, dataEnd), filter.filters, filter.chartEvent);
      const { timing, lastBody } = await uncachedRuns(client, options, request, runsPerRound);
      const all = timings.get(planned) ?? { samples: [], errors: {} };
      all.samples.push(...timing.samples);
      for (const [reason, count] of Object.entries(timing.errors))
        all.errors[reason] = (all.errors[reason] ?? 0) + count;
      timings.set(planned, all);
      if (lastBody !== undefined) lastBodies.set(planned, lastBody);
      if (round < rounds) continue;
      cell.uncached = summarize(all);
      noteMetricsAnswer(cell, endpoint, lastBodies.get(planned));
      if (endpoint.cached && all.samples.length > 0) await cachedRuns(client, options, request, cell);
      reportCell(cell, all, `${endpoint.label} ${days}d ${filter.id}`);
    }
  }
  progress("measuring the filtered section's plain-SQL baselines…");
  const baselines = new BaselineRunner(db, options, dataEnd);
  await baselines.begin();
  try {
    for (const { filter, endpoint, days, baseline } of plan) {
      const cell = cellOf(results, filter.id, endpoint, days);
      if (!baseline || cell.baseline) continue;
      await baselines.run(
        cell,
        endpoint,
        benchWindow(days, dataEnd),
        filter.id,
        filter.filters,
        filter.chartEvent,
      );
    }
  } finally {
    await baselines.end();
  }
}
