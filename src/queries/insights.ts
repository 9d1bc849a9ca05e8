import { and, desc, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../db/client";
import { events, sessions } from "../db/schema";
import type { Filter } from "../lib/filters";
import { sessionConditions } from "./filters";
import { ratio, timestampArray, toNumber } from "./sql-helpers";

/** Half-open time window in epoch milliseconds. */
export interface TimeWindow {
  start: number;
  end: number;
}

export interface SessionScope {
  projectId: string;
  window: TimeWindow;
  filters: Filter[];
}

export interface SessionMetrics {
  bounce_rate: number;
  unique_visitors: number;
  total_sessions: number;
  avg_session_duration: number;
  total_screen_views: number;
  views_per_session: number;
  total_revenue: number;
}

/** Sessions of the window (by first event) that pass the filters (contract sections 3 and 5). */
function sessionsInScope(scope: SessionScope): SQL | undefined {
  return and(
    eq(sessions.projectId, scope.projectId),
    gte(sessions.startedAt, new Date(scope.window.start)),
    lt(sessions.startedAt, new Date(scope.window.end)),
    sessionConditions(scope.filters),
  );
}

interface SessionColumns {
  profileId: AnyPgColumn | SQL.Aliased;
  isBounce: AnyPgColumn | SQL.Aliased;
  durationMs: AnyPgColumn | SQL.Aliased;
  screenViewCount: AnyPgColumn | SQL.Aliased;
  revenue: AnyPgColumn | SQL.Aliased;
}

/** The aggregates behind `SessionMetrics`, over any relation with the session columns. */
function metricColumns(s: SessionColumns) {
  return {
    total_sessions: sql<string>`count(*)`,
    unique_visitors: sql<string>`count(distinct ${s.profileId})`,
    bounce_rate: ratio(sql`count(*) filter (where ${s.isBounce})`, sql`count(*)`, 100),
    avg_session_duration: ratio(
      sql`sum(${s.durationMs}) filter (where ${s.durationMs} > 0)`,
      sql`count(*) filter (where ${s.durationMs} > 0)`,
      0.001,
    ),
    total_screen_views: sql<string>`coalesce(sum(${s.screenViewCount}), 0)`,
    views_per_session: ratio(sql`sum(${s.screenViewCount})`, sql`count(*)`),
    total_revenue: sql<string>`coalesce(sum(${s.revenue}), 0)`,
  };
}

function toMetrics(row: Record<keyof SessionMetrics, string | number | null>): SessionMetrics {
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

/**
 * The metrics of the whole window and of each bucket, in one pass: GROUPING SETS gives the
 * per-bucket rows and the total row (whose distinct visitor count is not a sum of buckets).
 * `buckets` are bucket start instants; every bucket is returned, zero-filled.
 */
export async function sessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<{ totals: SessionMetrics; series: SessionMetrics[] }> {
  // The bucket is computed once in a subquery: repeated in SELECT and GROUP BY it would carry
  // separately bound parameters, which Postgres does not recognise as the same expression.
  const scoped = db
    .select({
      bucket: sql<number>`width_bucket(${sessions.startedAt}, ${timestampArray(buckets)})`.as("bucket"),
      profileId: sessions.profileId,
      isBounce: sessions.isBounce,
      durationMs: sessions.durationMs,
      screenViewCount: sessions.screenViewCount,
      revenue: sessions.revenue,
    })
    .from(sessions)
    .where(sessionsInScope(scope))
    .as("scoped");
  const rows = await db
    .select({
      bucket: scoped.bucket,
      isTotal: sql<number>`grouping(${scoped.bucket})`,
      ...metricColumns(scoped),
    })
    .from(scoped)
    .groupBy(sql`grouping sets ((${scoped.bucket}), ())`);

  const series = buckets.map(() => EMPTY_METRICS);
  let totals = EMPTY_METRICS;
  for (const row of rows) {
    const metrics = toMetrics(row);
    if (Number(row.isTotal) === 1) totals = metrics;
    else if (row.bucket >= 1 && row.bucket <= buckets.length) series[row.bucket - 1] = metrics;
  }
  return { totals, series };
}

export interface Page {
  offset: number;
  limit: number;
}

export interface PageRow {
  title: string | null;
  origin: string | null;
  path: string | null;
  sessions: number;
  pageviews: number;
  bounce_rate: number;
  avg_duration: number;
}

/**
 * Top pages: per (origin, path), the sessions with a screen view of it, those screen views, the
 * bounce rate over those sessions and the mean time on page (contract section 5). Fetches one
 * row more than asked so the caller knows whether another page follows.
 */
export async function topPages(db: Database, scope: SessionScope, page: Page): Promise<PageRow[]> {
  const sessionCount = sql<string>`count(distinct ${events.sessionId})`;
  const rows = await db
    .select({
      title: sql<string | null>`max(${events.title})`,
      origin: events.origin,
      path: events.path,
      sessions: sessionCount,
      pageviews: sql<string>`count(*)`,
      bounce_rate: ratio(
        sql`count(distinct ${events.sessionId}) filter (where ${sessions.isBounce})`,
        sessionCount,
        100,
      ),
      avg_duration: ratio(
        sql`sum(${events.duration}) filter (where ${events.duration} > 0)`,
        sql`count(*) filter (where ${events.duration} > 0)`,
        0.001,
      ),
    })
    .from(sessions)
    .innerJoin(
      events,
      and(
        eq(events.projectId, sessions.projectId),
        eq(events.sessionId, sessions.id),
        eq(events.name, "screen_view"),
      ),
    )
    .where(sessionsInScope(scope))
    .groupBy(events.origin, events.path)
    .orderBy(
      desc(sessionCount),
      sql`${events.path} collate "C" asc nulls last`,
      sql`${events.origin} collate "C" asc nulls last`,
    )
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map((row) => ({
    title: row.title,
    origin: row.origin,
    path: row.path,
    sessions: toNumber(row.sessions),
    pageviews: toNumber(row.pageviews),
    bounce_rate: toNumber(row.bounce_rate),
    avg_duration: toNumber(row.avg_duration),
  }));
}

/** Breakdown dimensions (contract section 4) and the session columns behind them. */
export const BREAKDOWN_DIMENSIONS = {
  referrer: { name: sessions.referrer },
  referrer_name: { name: sessions.referrerName },
  referrer_type: { name: sessions.referrerType },
  country: { name: sessions.country },
  region: { name: sessions.region, prefix: sessions.country },
  city: { name: sessions.city, prefix: sessions.country },
  device: { name: sessions.device },
  brand: { name: sessions.brand },
  model: { name: sessions.model },
  browser: { name: sessions.browser },
  browser_version: { name: sessions.browserVersion, prefix: sessions.browser },
  os: { name: sessions.os },
  os_version: { name: sessions.osVersion, prefix: sessions.os },
  utm_source: { name: sessions.utmSource },
  utm_medium: { name: sessions.utmMedium },
  utm_campaign: { name: sessions.utmCampaign },
  utm_term: { name: sessions.utmTerm },
  utm_content: { name: sessions.utmContent },
} as const;

export type BreakdownDimension = keyof typeof BREAKDOWN_DIMENSIONS;

export interface BreakdownRow {
  name: string | null;
  prefix?: string | null;
  sessions: number;
  pageviews: number;
  bounce_rate: number;
  avg_session_duration: number;
}

/**
 * Sessions grouped by one of their attributes (the first event's). Empty strings count as
 * "not set" together with NULL, so direct traffic is one row named null.
 */
export async function sessionBreakdown(
  db: Database,
  scope: SessionScope,
  dimension: BreakdownDimension,
  page: Page,
): Promise<BreakdownRow[]> {
  const columns: { name: AnyPgColumn; prefix?: AnyPgColumn } = BREAKDOWN_DIMENSIONS[dimension];
  const name = sql<string | null>`nullif(${columns.name}, '')`;
  const prefix = columns.prefix ? sql<string | null>`nullif(${columns.prefix}, '')` : undefined;
  const sessionCount = sql<string>`count(*)`;
  const sessionAggregates = metricColumns(sessions);
  const rows = await db
    .select({
      name,
      prefix: prefix ?? sql<null>`null`,
      sessions: sessionCount,
      pageviews: sessionAggregates.total_screen_views,
      bounce_rate: sessionAggregates.bounce_rate,
      avg_session_duration: sessionAggregates.avg_session_duration,
    })
    .from(sessions)
    .where(sessionsInScope(scope))
    .groupBy(...(prefix ? [name, prefix] : [name]))
    .orderBy(
      desc(sessionCount),
      sql`${name} collate "C" asc nulls last`,
      ...(prefix ? [sql`${prefix} collate "C" asc nulls last`] : []),
    )
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map((row) => ({
    name: row.name,
    ...(prefix ? { prefix: row.prefix } : {}),
    sessions: toNumber(row.sessions),
    pageviews: toNumber(row.pageviews),
    bounce_rate: toNumber(row.bounce_rate),
    avg_session_duration: toNumber(row.avg_session_duration),
  }));
}
