import { ApiError } from "../../../lib/errors";
import {
  type Filter,
  type FilterField,
  normalizeFilters,
  type RawFilter,
  resolveFilterField,
} from "../../../lib/filter-parser";
import { type ResolvedRange, rangeFingerprint, resolveRange } from "../../../lib/range";
import { type ChartSegment, type ChartSeriesQuery, isPropertySegment } from "../../../queries/charts/model";
import type { ChartsInput, RawSeries } from "./schema";

/** A validated `/export/charts` request turned into what the chart queries and the cache need. */

export interface NormalizedSeries {
  name: string;
  segment: ChartSegment;
  /** Only for property segments. */
  property?: string;
  filters: RawFilter[];
}

/**
 * The requested series with the top-level `segment` and `property` applied. A property segment
 * without a property is a 400 at the series' `property` when the series chose the segment, else at
 * the top-level `property`.
 */
function normalizeSeries(query: ChartsInput): { param: string; series: NormalizedSeries[] } {
  if (query.series !== undefined && query.events !== undefined) {
    throw ApiError.invalid("events", "events is an alias of series: give one of them, not both");
  }
  const param = query.series !== undefined ? "series" : "events";
  const list: RawSeries[] | undefined = query.series ?? query.events;
  if (list === undefined) {
    throw ApiError.invalid(
      "series",
      'series is required: a JSON array of {name, filters?, segment?, property?}, e.g. [{"name":"screen_view"}]',
    );
  }
  const series = list.map((item, index): NormalizedSeries => {
    const segment = item.segment ?? query.segment;
    const base = { name: item.name, segment, filters: item.filters ?? [] };
    if (!isPropertySegment(segment)) return base;
    const property = item.property ?? query.property;
    if (property === undefined) {
      throw ApiError.invalid(
        item.segment === undefined ? "property" : `${param}/${index}/property`,
        `segment ${segment} needs a property: duration, revenue or properties.<key>`,
      );
    }
    return { ...base, property };
  });
  return { param, series };
}

export interface ChartRequest {
  /** `series`, or `events` when the alias was used: the prefix of a series' error paths. */
  param: string;
  series: NormalizedSeries[];
  /** The breakdown names as given (the keys of `event.breakdowns`). */
  breakdownNames: string[];
  range: ResolvedRange;
  limit: number;
  /** Normalized inputs that fully determine the answer: the cache key. */
  fingerprint: Record<string, unknown>;
}

/**
 * The most points (values of one series, group and bucket, in each period) one chart answer may
 * hold: about 4 MB of JSON. The bound is checked on what the request could return before any
 * query runs, so a chart that could exceed it is a 400, not a slow, huge answer.
 */
export const MAX_CHART_POINTS = 100_000;

function requireBoundedAnswer(series: number, groups: number, range: ResolvedRange): void {
  const periods = range.previous ? 2 : 1;
  const points = series * groups * range.buckets.length * periods;
  if (points <= MAX_CHART_POINTS) return;
  const format = new Intl.NumberFormat("en-US").format;
  // Only breakdown groups can take an answer past the bound (buckets stop at 2,000, series at 10).
  throw ApiError.invalid(
    "limit",
    `this chart could hold ${format(points)} points (${series} series × ${groups} breakdown groups × ` +
      `${format(range.buckets.length)} buckets × ${periods} periods), more than the ${format(MAX_CHART_POINTS)} ` +
      "an answer may hold: lower limit, use a coarser interval or a shorter range, or ask for fewer series",
  );
}

export function resolveChartRequest(
  query: ChartsInput,
  project: { timezone: string; firstEventAt: number | null },
  now: Date,
): ChartRequest {
  const { param, series } = normalizeSeries(query);
  const range = resolveRange({
    range: query.range,
    startDate: query.startDate,
    endDate: query.endDate,
    timezone: query.timezone ?? project.timezone,
    interval: query.interval,
    previous: query.previous === "true",
    now,
    defaultRange: "30d",
    autoInterval: false,
    firstEventAt: project.firstEventAt,
  });
  const breakdownNames = (query.breakdowns ?? []).map((breakdown) => breakdown.name);
  requireBoundedAnswer(series.length, breakdownNames.length > 0 ? query.limit : 1, range);
  return {
    param,
    series,
    breakdownNames,
    range,
    limit: query.limit,
    fingerprint: {
      ...rangeFingerprint(range),
      series,
      breakdowns: breakdownNames,
      limit: query.limit,
      filters: query.filters,
    },
  };
}

/** The chart's filters, each series' own, and one query per series (both filter lists ANDed). */
export function chartSeriesQueries(
  request: ChartRequest,
  chartFilterInput: RawFilter[],
  options: { projectId: string; rollups: boolean },
): { chartFilters: Filter[]; seriesFilters: Filter[][]; queries: ChartSeriesQuery[] } {
  const chartFilters = normalizeFilters(chartFilterInput);
  const seriesFilters = request.series.map((item) => normalizeFilters(item.filters));
  const breakdowns = request.breakdownNames.map((name, index): FilterField => {
    const field = resolveFilterField(name);
    // Unreachable after validation; a 400 rather than a 500 if a caller ever skips it.
    if (!field) throw ApiError.invalid(`breakdowns/${index}/name`, `unknown breakdown ${name}`);
    return field;
  });
  const { range } = request;
  const queries = request.series.map(
    (item, index): ChartSeriesQuery => ({
      projectId: options.projectId,
      event: item.name,
      segment: item.segment,
      property: item.property === undefined ? undefined : resolveFilterField(item.property),
      filters: [...chartFilters, ...(seriesFilters[index] ?? [])],
      breakdowns,
      limit: request.limit,
      current: { window: range.window, buckets: range.buckets },
      previous: range.previous,
      rollups: options.rollups,
    }),
  );
  return { chartFilters, seriesFilters, queries };
}
