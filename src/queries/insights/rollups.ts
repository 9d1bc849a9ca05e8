import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { rollupTimezones, sessions } from "../../db/schema";
import { addLocalDays, HOUR_MS, startOfLocalDay } from "../../lib/timezone";
import { rankOrder, ratio, timestampArray, toNumber } from "../sql-helpers";
import {
  type BreakdownRow,
  type BreakdownRowSource,
  type MetricsAnswer,
  type Numeric,
  type Page,
  type PageRow,
  type PageRowSource,
  type SessionScope,
  spreadOverBuckets,
  type TimeWindow,
  toBreakdownRow,
  toBucketMetrics,
  toPageRow,
} from "./model";
import { estimateVisitors } from "./visitor-sketch";

/**
 * The rollup path of the insights queries: the same numbers as the exact path (metrics.ts,
 * pages.ts, breakdowns.ts), read from the rollups that `refresh_derived()` maintains
 * (src/db/routines/refresh_rollups.sql and refresh_day_sketches.sql). Only unique visitors of large
 * windows differ: they come from merged HyperLogLog sketches (within ±2 %) and are flagged as
 * approximate. Callers use it only when `rollupsCover` says the hours add up to the request.
 */

/** The rollup families: their hour table, their day table, and the columns both share. */
const FAMILIES = {
  sessions: {
    hours: "session_rollups",
    days: "session_day_rollups",
    columns: "dimension, name, prefix, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue",
  },
  pages: {
    hours: "page_rollups",
    days: "page_day_rollups",
    columns: "origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views",
  },
  visitors: { hours: "visitor_sketches", days: "visitor_day_sketches", columns: "plane, registers" },
} as const;

/**
 * The whole days of the project's timezone inside the window that no bucket edge cuts, when every
 * one of them starts and ends on a whole UTC hour (so its day row equals its hours): their day
 * rows stand in for their hours. An empty window (at the window start) when there are none.
 */
export function wholeProjectDays(scope: SessionScope, buckets: readonly number[]): TimeWindow {
  const timezone = scope.projectTimezone;
  const none = { start: scope.window.start, end: scope.window.start };
  let start = startOfLocalDay(scope.window.start, timezone);
  if (start < scope.window.start) start = addLocalDays(start, 1, timezone);
  const end = startOfLocalDay(scope.window.end, timezone);
  if (start >= end) return none;
  for (let midnight = start; midnight <= end; midnight = addLocalDays(midnight, 1, timezone)) {
    if (midnight % HOUR_MS !== 0) return none;
  }
  const cut = buckets.some((edge) => edge > start && edge < end && startOfLocalDay(edge, timezone) !== edge);
  return cut ? none : { start, end };
}

/**
 * The rollup rows of a family covering the window, each with its `unit` start instant: day rows
 * for the whole project days, hour rows for the rest. Day rows count only if they were built in
 * the project's current timezone (rollup_timezones); otherwise the hours serve those days too.
 * Four index range scans, one per part; `condition` narrows every part (a dimension).
 */
function windowRows(
  family: keyof typeof FAMILIES,
  scope: SessionScope,
  buckets: readonly number[],
  condition?: SQL,
): SQL {
  const { hours, days, columns } = FAMILIES[family];
  const whole = wholeProjectDays(scope, buckets);
  const at = (instant: number) => new Date(instant);
  const list = sql.raw(columns);
  const also = condition ? sql` and ${condition}` : sql``;
  const daysBuilt = sql`exists (select 1 from ${rollupTimezones} where ${rollupTimezones.projectId} = ${scope.projectId} and ${rollupTimezones.timezone} = ${scope.projectTimezone})`;
  const hourRows = (from: number, to: number, extra: SQL = sql``) =>
    sql`select ${list}, hour as unit from ${sql.identifier(hours)} where project_id = ${scope.projectId} and hour >= ${at(from)} and hour < ${at(to)}${extra}${also}`;
  return sql`(
    select ${list}, day as unit from ${sql.identifier(days)}
    where project_id = ${scope.projectId} and day >= ${at(whole.start)} and day < ${at(whole.end)} and ${daysBuilt}${also}
    union all ${hourRows(scope.window.start, whole.start)}
    union all ${hourRows(whole.end, scope.window.end)}
    union all ${hourRows(whole.start, whole.end, sql` and not ${daysBuilt}`)}
  ) as units`;
}

export async function rolledUpSessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<MetricsAnswer> {
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
      from ${windowRows("sessions", scope, buckets, sql`dimension = ''`)}
    ) as bucketed
    group by grouping sets ((bucket), ())`);
  const answer = spreadOverBuckets(result.rows.map(toBucketMetrics), buckets.length);
  if (answer.totals.total_sessions === 0) return { ...answer, approximate: [] };

  // Few sessions: counting their distinct visitors exactly is as cheap as merging sketches.
  const exact = answer.totals.total_sessions <= EXACT_VISITORS_UP_TO;
  const visitors = exact
    ? await exactVisitors(db, scope, buckets)
    : await estimatedVisitors(db, scope, buckets);
  answer.totals.unique_visitors = visitors.get(0) ?? 0;
  answer.series.forEach((point, index) => {
    // Buckets without sessions keep the shared zero object; replace rather than mutate it.
    if (point.total_sessions > 0) {
      answer.series[index] = { ...point, unique_visitors: visitors.get(index + 1) ?? 0 };
    }
  });
  return { ...answer, approximate: exact ? [] : ["unique_visitors"] };
}

/**
 * Up to this many sessions in the window, unique visitors are counted exactly from `sessions`
 * (a few milliseconds); above it they come from the sketches.
 */
export const EXACT_VISITORS_UP_TO = 20_000;

/** Distinct visitors per bucket (keys 1..n) and over the window (key 0). */
export type VisitorCounts = Map<number, number>;

async function exactVisitors(db: Database, scope: SessionScope, buckets: number[]): Promise<VisitorCounts> {
  const scoped = db
    .select({
      bucket: sql<number>`width_bucket(${sessions.startedAt}, ${timestampArray(buckets)})`.as("bucket"),
      profileId: sessions.profileId,
    })
    .from(sessions)
    .where(
      and(
        eq(sessions.projectId, scope.projectId),
        gte(sessions.startedAt, new Date(scope.window.start)),
        lt(sessions.startedAt, new Date(scope.window.end)),
      ),
    )
    .as("scoped");
  const rows = await db
    .select({
      bucket: scoped.bucket,
      isTotal: sql<number>`grouping(${scoped.bucket})`,
      visitors: sql<string>`count(distinct ${scoped.profileId})`,
    })
    .from(scoped)
    .groupBy(sql`grouping sets ((${scoped.bucket}), ())`);
  return new Map(
    rows.map((row) => [Number(row.isTotal) === 1 ? 0 : Number(row.bucket), toNumber(row.visitors)]),
  );
}

/**
 * Unique visitors from the sketches of the window's days and hours, merged per bucket and over
 * the window. Planes merge with bit_or; bit_count of merged plane k = registers at or above k.
 */
export async function estimatedVisitors(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<VisitorCounts> {
  const result = await db.execute<{
    bucket: number;
    is_total: number;
    plane: number;
    registers: Numeric;
  }>(sql`
    select bucket, grouping(bucket) as is_total, plane, bit_count(bit_or(registers)) as registers
    from (
      select width_bucket(unit, ${timestampArray(buckets)}) as bucket, plane, registers
      from ${windowRows("visitors", scope, buckets)}
    ) as bucketed
    group by grouping sets ((bucket, plane), (plane))`);
  const sketches = new Map<number, Map<number, number>>();
  for (const row of result.rows) {
    const key = Number(row.is_total) === 1 ? 0 : Number(row.bucket);
    const sketch = sketches.get(key) ?? new Map<number, number>();
    sketch.set(Number(row.plane), toNumber(row.registers));
    sketches.set(key, sketch);
  }
  return new Map([...sketches].map(([key, sketch]) => [key, estimateVisitors(sketch)]));
}

export async function rolledUpTopPages(db: Database, scope: SessionScope, page: Page): Promise<PageRow[]> {
  const sessionCount = sql`sum(sessions)`;
  const result = await db.execute<PageRowSource>(sql`
    select max(title) as title, origin, path, ${sessionCount} as sessions, sum(pageviews) as pageviews,
      ${ratio(sql`sum(bounces)`, sessionCount, 100)} as bounce_rate,
      ${ratio(sql`sum(duration_ms)`, sql`sum(timed_views)`, 0.001)} as avg_duration
    from ${windowRows("pages", scope, [])}
    group by origin, path
    order by ${sql.join(rankOrder(sessionCount, sql`path`, sql`origin`), sql`, `)}
    limit ${page.limit + 1} offset ${page.offset}`);
  return result.rows.map(toPageRow);
}

export async function rolledUpBreakdown(
  db: Database,
  scope: SessionScope,
  dimension: string,
  withPrefix: boolean,
  page: Page,
): Promise<BreakdownRow[]> {
  const sessionCount = sql`sum(sessions)`;
  const result = await db.execute<BreakdownRowSource>(sql`
    select name, prefix, ${sessionCount} as sessions, sum(screen_views) as pageviews,
      ${ratio(sql`sum(bounces)`, sessionCount, 100)} as bounce_rate,
      ${ratio(sql`sum(duration_ms)`, sql`sum(timed_sessions)`, 0.001)} as avg_session_duration
    from ${windowRows("sessions", scope, [], sql`dimension = ${dimension}`)}
    group by name, prefix
    order by ${sql.join(rankOrder(sessionCount, sql`name`, sql`prefix`), sql`, `)}
    limit ${page.limit + 1} offset ${page.offset}`);
  return result.rows.map((row) => toBreakdownRow(row, withPrefix));
}
