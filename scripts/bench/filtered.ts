import type pg from "pg";
import {
  benchWindow,
  CHART_SEGMENT_ENDPOINTS,
  ENDPOINTS,
  type Endpoint,
  isSessionEndpoint,
  type WindowDays,
} from "./cases";
import type { FilterCase } from "./filters";
import { type ApiClient, progress } from "./measure";
import type { BenchOptions } from "./options";
import { type BenchResults, coreFilter } from "./results";
import { BaselineRunner, cellOf, measureApiCell } from "./run-cells";

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

export interface FilteredCell {
  filter: FilterCase;
  endpoint: Endpoint;
  days: WindowDays;
  /** Also measure the plain-SQL baseline. */
  baseline: boolean;
}

/** The endpoints a filter case is measured on (in a full run; the smoke takes the few for all). */
export function filteredEndpoints(filter: FilterCase, smoke: boolean): readonly Endpoint[] {
  if (filter.kind === "chart") return CHART_SEGMENT_ENDPOINTS;
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
          (filter.kind === "chart" || endpoint.kind === "metrics" || filter.id === baselineDimension);
        cells.push({ filter, endpoint, days, baseline });
      }
    }
  }
  return cells;
}

export async function measureFiltered(
  client: ApiClient,
  db: pg.Client,
  options: BenchOptions,
  results: BenchResults,
  dataEnd: Date,
): Promise<void> {
  const plan = planFiltered(results);
  progress(`measuring the filtered section (${plan.length} cells, uncached and cached)…`);
  for (const { filter, endpoint, days } of plan) {
    const cell = cellOf(results, filter.id, endpoint, days);
    // Shared with the core matrix (its session and event filters), which may have measured it.
    if (cell.uncached) continue;
    await measureApiCell(
      client,
      options,
      endpoint,
      benchWindow(days, dataEnd),
      filter.filters,
      cell,
      `${endpoint.label} ${days}d ${filter.id}`,
    );
  }
  progress("measuring the filtered section's plain-SQL baselines…");
  const baselines = new BaselineRunner(db, options, dataEnd);
  await baselines.begin();
  try {
    for (const { filter, endpoint, days, baseline } of plan) {
      const cell = cellOf(results, filter.id, endpoint, days);
      if (!baseline || cell.baseline) continue;
      await baselines.run(cell, endpoint, benchWindow(days, dataEnd), filter.id, filter.filters);
    }
  } finally {
    await baselines.end();
  }
}
