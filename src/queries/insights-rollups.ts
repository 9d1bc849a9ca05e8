import { and, eq, gte, lt, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import {
  pageRollups,
  rollupTimezones,
  sessionRollups,
  sessions,
  visitorDaySketches,
  visitorSketches,
} from "../db/schema";
import { addLocalDays, startOfLocalDay } from "../lib/timezone";
import {
  type BreakdownRow,
  type MetricsAnswer,
  type Page,
  type PageRow,
  type SessionScope,
  spreadOverBuckets,
  type TimeWindow,
  toBreakdownRow,
  toBucketMetrics,
  toPageRow,
} from "./insights-model";
import { rankOrder, ratio, timestampArray, toNumber } from "./sql-helpers";
import { estimateVisitors } from "./visitor-sketch";

/**
 * The rollup path of the insights queries: the same numbers as the exact path in insights.ts,
 * read from the hourly rollups that `refresh_derived()` maintains. Only unique visitors differ:
 * they come from merged HyperLogLog sketches (within ±2 %) and are flagged as approximate.
 * Callers use it only when `rollupsCover` says the hours add up to the request.
 */

/** Rows of the hours of the window, for one project. */
function hoursOf<T extends typeof sessionRollups | typeof pageRollups | typeof visitorSketches>(
  table: T,
  scope: SessionScope,
) {
  return and(
    eq(table.projectId, scope.projectId),
    gte(table.hour, new Date(scope.window.start)),
    lt(table.hour, new Date(scope.window.end)),
  );
}

export async function rolledUpSessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<MetricsAnswer> {
  const edges = timestampArray(buckets);
  // The bucket is computed once in a subquery, as in the exact path (bound parameters repeated in
  // SELECT and GROUP BY are not the same expression to Postgres).
  const hours = db
    .select({
      bucket: sql<number>`width_bucket(${sessionRollups.hour}, ${edges})`.as("bucket"),
      sessions: sessionRollups.sessions,
      bounces: sessionRollups.bounces,
      screenViews: sessionRollups.screenViews,
      durationMs: sessionRollups.durationMs,
      timedSessions: sessionRollups.timedSessions,
      revenue: sessionRollups.revenue,
    })
    .from(sessionRollups)
    .where(and(hoursOf(sessionRollups, scope), eq(sessionRollups.dimension, "")))
    .as("hours");
  const sessionCount = sql`coalesce(sum(${hours.sessions}), 0)`;
  const totalsQuery = db
    .select({
      bucket: hours.bucket,
      isTotal: sql<number>`grouping(${hours.bucket})`,
      total_sessions: sql<string>`${sessionCount}`,
      unique_visitors: sql<number>`0`,
      bounce_rate: ratio(sql`sum(${hours.bounces})`, sessionCount, 100),
      avg_session_duration: ratio(sql`sum(${hours.durationMs})`, sql`sum(${hours.timedSessions})`, 0.001),
      total_screen_views: sql<string>`coalesce(sum(${hours.screenViews}), 0)`,
      views_per_session: ratio(sql`sum(${hours.screenViews})`, sessionCount),
      total_revenue: sql<string>`coalesce(sum(${hours.revenue}), 0)`,
    })
    .from(hours)
    .groupBy(sql`grouping sets ((${hours.bucket}), ())`);

  const totalRows = await totalsQuery;
  const answer = spreadOverBuckets(totalRows.map(toBucketMetrics), buckets.length);
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
 * The whole days of the project's timezone inside the window that no bucket edge cuts: their
 * day sketches stand in for their hours. Empty when there are none.
 */
function wholeProjectDays(scope: SessionScope, buckets: readonly number[]): TimeWindow {
  const timezone = scope.projectTimezone;
  let start = startOfLocalDay(scope.window.start, timezone);
  if (start < scope.window.start) start = addLocalDays(start, 1, timezone);
  const end = startOfLocalDay(scope.window.end, timezone);
  const cut = buckets.some((edge) => edge > start && edge < end && startOfLocalDay(edge, timezone) !== edge);
  return start < end && !cut ? { start, end } : { start, end: start };
}

/**
 * Unique visitors from the sketches: day sketches for the whole project-timezone days, hour
 * sketches for the rest, merged per bucket and over the window. The day sketches count only if
 * they were built in the project's current timezone (rollup_timezones); otherwise the hours serve
 * those days too. Planes merge with bit_or; bit_count of plane k = registers at or above k.
 */
export async function estimatedVisitors(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<VisitorCounts> {
  const days = wholeProjectDays(scope, buckets);
  const dayStart = new Date(days.start);
  const dayEnd = new Date(days.end);
  const daysBuilt = sql`exists (select 1 from ${rollupTimezones} where ${rollupTimezones.projectId} = ${scope.projectId} and ${rollupTimezones.timezone} = ${scope.projectTimezone})`;
  const edges = timestampArray(buckets);
  const result = await db.execute<{ bucket: number; is_total: number; plane: number; registers: string }>(sql`
    select bucket, grouping(bucket) as is_total, plane, bit_count(bit_or(registers)) as registers
    from (
      select width_bucket(${visitorDaySketches.day}, ${edges}) as bucket, ${visitorDaySketches.plane} as plane, ${visitorDaySketches.registers} as registers
      from ${visitorDaySketches}
      where ${visitorDaySketches.projectId} = ${scope.projectId}
        and ${visitorDaySketches.day} >= ${dayStart} and ${visitorDaySketches.day} < ${dayEnd} and ${daysBuilt}
      union all
      select width_bucket(${visitorSketches.hour}, ${edges}), ${visitorSketches.plane}, ${visitorSketches.registers}
      from ${visitorSketches}
      where ${visitorSketches.projectId} = ${scope.projectId}
        and ${visitorSketches.hour} >= ${new Date(scope.window.start)} and ${visitorSketches.hour} < ${new Date(scope.window.end)}
        and not (${visitorSketches.hour} >= ${dayStart} and ${visitorSketches.hour} < ${dayEnd} and ${daysBuilt})
    ) units
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
  const sessionCount = sql<string>`sum(${pageRollups.sessions})`;
  const rows = await db
    .select({
      title: sql<string | null>`max(${pageRollups.title})`,
      origin: pageRollups.origin,
      path: pageRollups.path,
      sessions: sessionCount,
      pageviews: sql<string>`sum(${pageRollups.pageviews})`,
      bounce_rate: ratio(sql`sum(${pageRollups.bounces})`, sessionCount, 100),
      avg_duration: ratio(sql`sum(${pageRollups.durationMs})`, sql`sum(${pageRollups.timedViews})`, 0.001),
    })
    .from(pageRollups)
    .where(hoursOf(pageRollups, scope))
    .groupBy(pageRollups.origin, pageRollups.path)
    .orderBy(...rankOrder(sessionCount, pageRollups.path, pageRollups.origin))
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map(toPageRow);
}

export async function rolledUpBreakdown(
  db: Database,
  scope: SessionScope,
  dimension: string,
  withPrefix: boolean,
  page: Page,
): Promise<BreakdownRow[]> {
  const sessionCount = sql<string>`sum(${sessionRollups.sessions})`;
  const rows = await db
    .select({
      name: sessionRollups.name,
      prefix: sessionRollups.prefix,
      sessions: sessionCount,
      pageviews: sql<string>`sum(${sessionRollups.screenViews})`,
      bounce_rate: ratio(sql`sum(${sessionRollups.bounces})`, sessionCount, 100),
      avg_session_duration: ratio(
        sql`sum(${sessionRollups.durationMs})`,
        sql`sum(${sessionRollups.timedSessions})`,
        0.001,
      ),
    })
    .from(sessionRollups)
    .where(and(hoursOf(sessionRollups, scope), eq(sessionRollups.dimension, dimension)))
    .groupBy(sessionRollups.name, sessionRollups.prefix)
    .orderBy(...rankOrder(sessionCount, sessionRollups.name, sessionRollups.prefix))
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map((row) => toBreakdownRow(row, withPrefix));
}
