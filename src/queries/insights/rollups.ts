import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { BreakdownDimension } from "../../lib/dimensions";
import { dimensionValueCondition } from "../filter-conditions";
import { ratio, timestampArray } from "../sql-helpers";
import {
  type BreakdownRow,
  dimensionFilter,
  type MetricsAnswer,
  type Numeric,
  type Page,
  type SessionScope,
  spreadOverBuckets,
  toBucketMetrics,
} from "./model";
import { rankedBreakdown } from "./ranked-rows";
import { type VisitorCounts, windowVisitors } from "./visitors";
import { windowRows } from "./window-rows";

/**
 * The rollup path of the insights queries: the same numbers as the exact path (metrics.ts,
 * pages.ts, breakdowns.ts), read from the rollups that `refresh_derived()` maintains
 * (src/db/routines/refresh_rollups.sql and refresh_visitor_sketches.sql). Only unique visitors of large
 * windows differ: they come from merged HyperLogLog sketches (within ±2 %) and are flagged as
 * approximate (visitors.ts). Callers use it only when the coverage predicates of model.ts say the
 * rollups add up to the request.
 */

/**
 * The session rollup rows of a scope: those of a dimension (all sessions: ''), narrowed by the
 * scope's filter to the values it keeps when the filter is on that dimension. Without a dimension,
 * the rows of the filter's dimension, else all sessions.
 */
function sessionRowsOf(scope: SessionScope, dimension?: BreakdownDimension): SQL {
  const filter = dimensionFilter(scope);
  const rows = dimension ?? filter?.dimension ?? "";
  if (!filter || filter.dimension !== rows) return sql`dimension = ${rows}`;
  return sql`dimension = ${rows} and ${dimensionValueCondition(filter.filter, sql`name`)}`;
}

export async function rolledUpSessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<MetricsAnswer> {
  const answer = await summedSessionMetrics(
    db,
    windowRows("sessions", scope, buckets, sessionRowsOf(scope)),
    buckets,
  );
  if (answer.totals.total_sessions === 0) return { ...answer, approximate: [] };
  const visitors = await windowVisitors(db, scope, buckets, answer.totals.total_sessions);
  return {
    ...withVisitors(answer, visitors.counts),
    approximate: visitors.approximate ? ["unique_visitors"] : [],
  };
}

/**
 * The metrics of session rollup rows (`rows`: a FROM item with the rollups' columns and the `unit`
 * start of each row), per bucket and in all, with no visitors yet: they are not a sum.
 */
export async function summedSessionMetrics(
  db: Database,
  rows: SQL,
  buckets: number[],
): Promise<Omit<MetricsAnswer, "approximate">> {
  const sessionCount = sql`coalesce(sum(sessions), 0)`;
  // The bucket is computed once in a subquery: bound parameters repeated in SELECT and GROUP BY
  // are not the same expression to Postgres.
  const result = await db.execute<
    { bucket: number; isTotal: number } & Record<
      | "total_sessions"
      | "unique_visitors"
      | "bounce_rate"
      | "avg_session_duration"
      | "total_screen_views"
      | "views_per_session"
      | "total_revenue",
      Numeric
    >
  >(sql`
    select bucket, grouping(bucket) as "isTotal",
      ${sessionCount} as total_sessions, 0 as unique_visitors,
      ${ratio(sql`sum(bounces)`, sessionCount, 100)} as bounce_rate,
      ${ratio(sql`sum(duration_ms)`, sql`sum(timed_sessions)`, 0.001)} as avg_session_duration,
      coalesce(sum(screen_views), 0) as total_screen_views,
      ${ratio(sql`sum(screen_views)`, sessionCount)} as views_per_session,
      coalesce(sum(revenue), 0) as total_revenue
    from (
      select width_bucket(unit, ${timestampArray(buckets)}) as bucket, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue
      from ${rows}
    ) as bucketed
    group by grouping sets ((bucket), ())`);
  return spreadOverBuckets(result.rows.map(toBucketMetrics), buckets.length);
}

/** The metrics with their unique visitors: per bucket (keys 1..n) and in all (key 0). */
export function withVisitors(
  answer: Omit<MetricsAnswer, "approximate">,
  counts: VisitorCounts,
): Omit<MetricsAnswer, "approximate"> {
  return {
    totals: { ...answer.totals, unique_visitors: counts.get(0) ?? 0 },
    // Buckets without sessions keep the shared zero object; replace rather than mutate it.
    series: answer.series.map((point, index) =>
      point.total_sessions > 0 ? { ...point, unique_visitors: counts.get(index + 1) ?? 0 } : point,
    ),
  };
}

export function rolledUpBreakdown(
  db: Database,
  scope: SessionScope,
  dimension: BreakdownDimension,
  withPrefix: boolean,
  page: Page,
): Promise<BreakdownRow[]> {
  return rankedBreakdown(
    db,
    windowRows("sessions", scope, [], sessionRowsOf(scope, dimension)),
    withPrefix,
    page,
  );
}
