import { and, eq, gt, gte, lt, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../db/client";
import { sessionPages, sessions } from "../db/schema";
import { sessionConditions } from "./filters";
import {
  type BreakdownRow,
  type MetricsAnswer,
  type Page,
  type PageRow,
  rollupsCover,
  type SessionScope,
  spreadOverBuckets,
  toBreakdownRow,
  toBucketMetrics,
  toPageRow,
} from "./insights-model";
import { rolledUpBreakdown, rolledUpSessionMetrics, rolledUpTopPages } from "./insights-rollups";
import { rankOrder, ratio, timestampArray } from "./sql-helpers";

export type {
  ApproximateMetric,
  BreakdownRow,
  MetricsAnswer,
  Page,
  PageRow,
  SessionMetrics,
  SessionScope,
  TimeWindow,
} from "./insights-model";
export { EMPTY_METRICS } from "./insights-model";

const windowDates = (scope: SessionScope) => ({
  start: new Date(scope.window.start),
  end: new Date(scope.window.end),
});

/** Sessions of the window (by first event) that pass the filters (contract sections 3 and 5). */
function sessionsInScope(scope: SessionScope): SQL | undefined {
  const window = windowDates(scope);
  return and(
    eq(sessions.projectId, scope.projectId),
    gte(sessions.startedAt, window.start),
    lt(sessions.startedAt, window.end),
    sessionConditions(scope.filters, { window }),
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

/**
 * The metrics of the whole window and of each bucket, in one pass: GROUPING SETS gives the
 * per-bucket rows and the total row (whose distinct visitor count is not a sum of buckets).
 * `buckets` are bucket start instants; every bucket is returned, zero-filled.
 */
export function sessionMetrics(db: Database, scope: SessionScope, buckets: number[]): Promise<MetricsAnswer> {
  return rollupsCover(scope, buckets)
    ? rolledUpSessionMetrics(db, scope, buckets)
    : exactSessionMetrics(db, scope, buckets);
}

async function exactSessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<MetricsAnswer> {
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

  return { ...spreadOverBuckets(rows.map(toBucketMetrics), buckets.length), approximate: [] };
}

/**
 * Top pages: per (origin, path), the sessions with a screen view of it, those screen views, the
 * bounce rate over those sessions and the mean time on page (contract section 5). Fetches one
 * row more than asked so the caller knows whether another page follows.
 */
export function topPages(db: Database, scope: SessionScope, page: Page): Promise<PageRow[]> {
  return rollupsCover(scope) ? rolledUpTopPages(db, scope, page) : exactTopPages(db, scope, page);
}

/**
 * From the session pages of the window's sessions: a session counts once per page it viewed.
 * Filters apply to the session each page row names, so no events are read.
 */
async function exactTopPages(db: Database, scope: SessionScope, page: Page): Promise<PageRow[]> {
  const window = windowDates(scope);
  const sessionCount = sql<string>`count(*)`;
  const rows = await db
    .select({
      title: sql<string | null>`max(${sessionPages.title})`,
      origin: sessionPages.origin,
      path: sessionPages.path,
      sessions: sessionCount,
      pageviews: sql<string>`sum(${sessionPages.views})`,
      bounce_rate: ratio(sql`count(*) filter (where ${sessionPages.isBounce})`, sessionCount, 100),
      avg_duration: ratio(sql`sum(${sessionPages.durationMs})`, sql`sum(${sessionPages.timedViews})`, 0.001),
    })
    .from(sessionPages)
    .where(
      and(
        eq(sessionPages.projectId, scope.projectId),
        gte(sessionPages.startedAt, window.start),
        lt(sessionPages.startedAt, window.end),
        gt(sessionPages.views, 0),
        sessionConditions(scope.filters, {
          window,
          of: { projectId: sessionPages.projectId, sessionId: sessionPages.sessionId },
        }),
      ),
    )
    .groupBy(sessionPages.origin, sessionPages.path)
    .orderBy(...rankOrder(sessionCount, sessionPages.path, sessionPages.origin))
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map(toPageRow);
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

/**
 * Sessions grouped by one of their attributes (the first event's). Empty strings count as
 * "not set" together with NULL, so direct traffic is one row named null.
 */
export function sessionBreakdown(
  db: Database,
  scope: SessionScope,
  dimension: BreakdownDimension,
  page: Page,
): Promise<BreakdownRow[]> {
  return rollupsCover(scope)
    ? rolledUpBreakdown(db, scope, dimension, "prefix" in BREAKDOWN_DIMENSIONS[dimension], page)
    : exactBreakdown(db, scope, dimension, page);
}

async function exactBreakdown(
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
    .orderBy(...rankOrder(sessionCount, name, ...(prefix ? [prefix] : [])))
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map((row) => toBreakdownRow(row, prefix !== undefined));
}
