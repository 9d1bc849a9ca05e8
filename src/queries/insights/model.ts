import {
  type BitStringDimension,
  type BreakdownDimension,
  type FilterDimension,
  isBitStringOnlyDimension,
  isBreakdownDimension,
  isMultiValuedDimension,
  propertyStringDimension,
} from "../../lib/dimensions";
import type { Filter } from "../../lib/filter-parser";
import { HOUR_MS } from "../../lib/timezone";
import type { BreakdownRow, PageRow, SessionMetrics } from "../../schemas/insights";
import { propertyStringsAnswer } from "../property-leaves";
import { toNumber } from "../sql-helpers";

/** Shapes shared by the two paths of the insights queries: exact (metrics.ts, pages.ts, breakdowns.ts) and rolled up (rollups.ts). */

/** Half-open time window in epoch milliseconds. */
export interface TimeWindow {
  start: number;
  end: number;
}

/** Some whole days of a window: with `days` (their local midnights), only those; else all of them. */
export interface DayPart extends TimeWindow {
  days?: readonly number[];
}

export interface SessionScope {
  projectId: string;
  window: TimeWindow;
  filters: Filter[];
  /** The project's own timezone: its day sketches cover whole days of it. */
  projectTimezone: string;
  /** Whether the hourly rollups may answer (the ROLLUPS switch); they do only when they cover the request. */
  rollups: boolean;
  /**
   * Whether a `regex` filter's pattern matches the empty text, as Postgres found when it checked
   * the patterns (`assertValidRegexes`). Only `false` lets a regex filter use the rollups.
   */
  regexMatchesEmpty?: boolean;
}

/** Metrics that came from sketches rather than exact counts (`meta.approximate`). */
export type ApproximateMetric = "unique_visitors";

export function toMetrics(row: Record<keyof SessionMetrics, string | number | null>): SessionMetrics {
  return {
    bounce_rate: toNumber(row.bounce_rate),
    unique_visitors: toNumber(row.unique_visitors),
    total_sessions: toNumber(row.total_sessions),
    avg_session_duration: toNumber(row.avg_session_duration),
    total_screen_views: toNumber(row.total_screen_views),
    views_per_session: toNumber(row.views_per_session),
    total_revenue: toNumber(row.total_revenue),
  };
}

export const EMPTY_METRICS: SessionMetrics = toMetrics({
  bounce_rate: 0,
  unique_visitors: 0,
  total_sessions: 0,
  avg_session_duration: 0,
  total_screen_views: 0,
  views_per_session: 0,
  total_revenue: 0,
});

export type { BreakdownRow, PageRow, SessionMetrics };

export interface Page {
  offset: number;
  limit: number;
}

/** Metrics of a window and of each of its buckets, and which of them are estimates. */
export interface MetricsAnswer {
  totals: SessionMetrics;
  series: SessionMetrics[];
  approximate: ApproximateMetric[];
}

/** One row of a per-bucket aggregate with a grand-total row (GROUPING SETS ((bucket), ())). */
export interface BucketMetrics {
  /** 1-based bucket (width_bucket); ignored on the total row. */
  bucket: number;
  isTotal: boolean;
  metrics: SessionMetrics;
}

export function toBucketMetrics(
  row: { bucket: number | string; isTotal: number | string } & Record<
    keyof SessionMetrics,
    string | number | null
  >,
): BucketMetrics {
  return { bucket: Number(row.bucket), isTotal: Number(row.isTotal) === 1, metrics: toMetrics(row) };
}

/** Totals and a zero-filled series of `bucketCount` buckets from per-bucket rows. */
export function spreadOverBuckets(
  rows: readonly BucketMetrics[],
  bucketCount: number,
): { totals: SessionMetrics; series: SessionMetrics[] } {
  const series = Array.from({ length: bucketCount }, () => EMPTY_METRICS);
  let totals = EMPTY_METRICS;
  for (const row of rows) {
    if (row.isTotal) totals = row.metrics;
    else if (row.bucket >= 1 && row.bucket <= bucketCount) series[row.bucket - 1] = row.metrics;
  }
  return { totals, series };
}

/** A numeric column as the driver returns it (numeric and bigint arrive as text). */
export type Numeric = string | number | null;

/** A page row as both paths select it, before its numbers are parsed. */
export type PageRowSource = {
  title: string | null;
  origin: string | null;
  path: string | null;
  sessions: Numeric;
  pageviews: Numeric;
  bounce_rate: Numeric;
  avg_duration: Numeric;
};

/** A page row as the ranking paths give it; its revenue comes from page-revenue.ts. */
export type RankedPage = Omit<PageRow, "revenue">;

export function toPageRow(row: PageRowSource): RankedPage {
  return {
    title: row.title,
    origin: row.origin,
    path: row.path,
    sessions: toNumber(row.sessions),
    pageviews: toNumber(row.pageviews),
    bounce_rate: toNumber(row.bounce_rate),
    avg_duration: toNumber(row.avg_duration),
  };
}

/** A breakdown row as both paths select it, before its numbers are parsed. */
export type BreakdownRowSource = {
  name: string | null;
  prefix: string | null;
  sessions: Numeric;
  pageviews: Numeric;
  bounce_rate: Numeric;
  avg_session_duration: Numeric;
  revenue: Numeric;
};

/** A breakdown row; `prefix` only on the dimensions that have one (region, city, versions). */
export function toBreakdownRow(row: BreakdownRowSource, withPrefix: boolean): BreakdownRow {
  return {
    name: row.name,
    ...(withPrefix ? { prefix: row.prefix } : {}),
    sessions: toNumber(row.sessions),
    pageviews: toNumber(row.pageviews),
    bounce_rate: toNumber(row.bounce_rate),
    avg_session_duration: toNumber(row.avg_session_duration),
    revenue: toNumber(row.revenue),
  };
}

/** The rollups may answer (the switch) and every instant that matters is a whole UTC hour. */
function hoursCover(scope: SessionScope, buckets: readonly number[]): boolean {
  return (
    scope.rollups &&
    [scope.window.start, scope.window.end, ...buckets].every((instant) => instant % HOUR_MS === 0)
  );
}

/**
 * A filter on one dimension, which the rollups answer from that dimension's rows (or the bit
 * strings from its strings: `BitStringDimension`, which adds `origin`).
 */
export interface DimensionFilter<Dimension extends BitStringDimension = FilterDimension> {
  dimension: Dimension;
  filter: Filter;
}

/** A filter the bit strings per day answer. */
export type BitStringFilter = DimensionFilter<BitStringDimension>;

/**
 * Whether rows per dimension value answer `filter`: its operator applied to the dimension's values
 * as the rollups store them. Rollups store "" and NULL alike as not set, so a filter that tells them
 * apart does not qualify: any value that is "", and a `regex` unless its patterns are known not to
 * match "" (`regexMatchesEmpty`); the regex then runs over the stored values.
 */
function rolledUpValues(scope: SessionScope, filter: Filter): boolean {
  if (filter.operator === "regex" && scope.regexMatchesEmpty !== false) return false;
  return !filter.values.some((value) => String(value) === "");
}

/** A filter on one of the 18 breakdown dimensions whose values the rollups answer. */
function sessionAttributeFilter(scope: SessionScope, filter: Filter): DimensionFilter | undefined {
  const { field } = filter;
  if (field.kind !== "column" || field.scope !== "session" || !isBreakdownDimension(field.column))
    return undefined;
  return rolledUpValues(scope, filter) ? { dimension: field.column, filter } : undefined;
}

/**
 * The request's filter when the rollups can answer it: one filter on a breakdown dimension
 * (sessionAttributeFilter), or `path is` one path or `name is` one event name. A session counts
 * under each of its paths and names, so the rows of several values do not add up to the sessions
 * with any of them: only one value is answered so.
 */
export function dimensionFilter(scope: SessionScope): DimensionFilter | undefined {
  const [filter, ...more] = scope.filters;
  if (!filter || more.length > 0) return undefined;
  const { field } = filter;
  if (field.kind === "column" && isMultiValuedDimension(field.column)) {
    return filter.operator === "is" && filter.values.length === 1 && rolledUpValues(scope, filter)
      ? { dimension: field.column, filter }
      : undefined;
  }
  return sessionAttributeFilter(scope, filter);
}

/** The most filters one request combines from the bit strings per day. */
const MAX_BIT_STRING_FILTERS = 3;

/**
 * A filter the bit strings answer: one on a breakdown dimension (sessionAttributeFilter), or on
 * the paths, origins or event names a session holds. A session has a string under each of its
 * paths, origins and names, and under "not set" (NULL) for an event without a path or origin, so
 * the OR of the strings of the values a filter matches, "not set" included where the operator
 * matches a missing value (`isNot`, `doesNotContain`, `isNull`), is the sessions with an event the
 * filter keeps, which is what it keeps. "" and NULL are one value there, as in the rollups. A
 * property filter with a positive operator is answered the same way from the strings of the
 * path's values.
 */
function bitStringFilter(scope: SessionScope, filter: Filter): BitStringFilter | undefined {
  const { field } = filter;
  if (field.kind === "property") {
    // A positive operator over the values the property rows hold (property-leaves.ts): a session
    // has a string under each of them. Whether the window's days have the path's strings, and,
    // for an operator the rows answer only with their marks, that no session of the window is
    // marked there, is asked with the days' (session-masks.ts, bitStringsCover).
    return propertyStringsAnswer(filter) !== undefined && rolledUpValues(scope, filter)
      ? { dimension: propertyStringDimension(field.path), filter }
      : undefined;
  }
  if (
    field.kind === "column" &&
    (isMultiValuedDimension(field.column) || isBitStringOnlyDimension(field.column))
  ) {
    return rolledUpValues(scope, filter) ? { dimension: field.column, filter } : undefined;
  }
  return sessionAttributeFilter(scope, filter);
}

/**
 * The filters when the bit strings per day over sessions answer (session-bits.ts): two or three
 * filters, each one bitStringFilter answers, two of them on the same dimension included, or one
 * that the rollups do not answer: several paths or event names, or another operator than `is` on
 * them (a session holding two of them would count twice in their rows), or an origin (no rows).
 */
export function bitStringFilters(scope: SessionScope): BitStringFilter[] | undefined {
  if (!scope.rollups || scope.filters.length === 0 || scope.filters.length > MAX_BIT_STRING_FILTERS)
    return undefined;
  if (scope.filters.length === 1 && dimensionFilter(scope) !== undefined) return undefined;
  const filters = scope.filters.map((filter) => bitStringFilter(scope, filter));
  return filters.every((filter) => filter !== undefined) ? filters : undefined;
}

/**
 * The hourly rollups answer a request without filters when the switch allows and every instant
 * that matters (window edges, bucket edges) is a whole UTC hour: then each rollup hour lies inside
 * one bucket and the rows of the window's hours hold exactly its sessions.
 */
export function rollupsCover(scope: SessionScope, buckets: readonly number[] = []): boolean {
  return hoursCover(scope, buckets) && scope.filters.length === 0;
}

/** `/metrics` is answered from the rollups without a filter, or with one on a breakdown dimension. */
export function metricsRollupsCover(scope: SessionScope, buckets: readonly number[]): boolean {
  return hoursCover(scope, buckets) && (scope.filters.length === 0 || dimensionFilter(scope) !== undefined);
}

/** A breakdown is answered from the rollups without a filter, or with one on its own dimension. */
export function breakdownRollupsCover(scope: SessionScope, dimension: BreakdownDimension): boolean {
  return (
    hoursCover(scope, []) && (scope.filters.length === 0 || dimensionFilter(scope)?.dimension === dimension)
  );
}

/**
 * The filter when rows per project day and value answer under it: one filter on a breakdown
 * dimension, in any window, since the hours around the window's whole project days are read
 * exactly (window-rows.ts, daysWithExactParts).
 */
export function dayRollupsFilter(scope: SessionScope): DimensionFilter | undefined {
  return scope.rollups ? dimensionFilter(scope) : undefined;
}

/** The filter when the pair rollups answer a breakdown: one on another breakdown dimension. */
export function pairRollupsFilter(
  scope: SessionScope,
  dimension: BreakdownDimension,
): DimensionFilter | undefined {
  const filter = dayRollupsFilter(scope);
  return filter?.dimension !== dimension ? filter : undefined;
}
