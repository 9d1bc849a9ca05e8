import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { sessions } from "../../db/schema";
import { sessionConditions } from "../filter-conditions";
import { ratio, timestampArray } from "../sql-helpers";
import type { SessionScope } from "./model";

/** What the exact insights queries share: the sessions of a scope and the aggregates over them. */

/** The window as the bound timestamps the builders compare with. */
export const windowDates = (scope: SessionScope) => ({
  start: new Date(scope.window.start),
  end: new Date(scope.window.end),
});

/** Sessions of the window (by first event) that pass the filters (contract sections 3 and 5). */
export function sessionsInScope(scope: SessionScope): SQL | undefined {
  const window = windowDates(scope);
  return and(
    eq(sessions.projectId, scope.projectId),
    gte(sessions.startedAt, window.start),
    lt(sessions.startedAt, window.end),
    sessionConditions(scope.filters, { window }),
  );
}

/**
 * The scope's sessions with their 1-based bucket (width_bucket over the bucket starts), as a
 * subquery: the bucket is computed once here, since repeated in SELECT and GROUP BY it would carry
 * separately bound parameters, which Postgres does not recognise as the same expression.
 */
export function sessionsByBucket(db: Database, scope: SessionScope, buckets: number[]) {
  return db
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
}

interface SessionColumns {
  profileId: AnyPgColumn | SQL.Aliased;
  isBounce: AnyPgColumn | SQL.Aliased;
  durationMs: AnyPgColumn | SQL.Aliased;
  screenViewCount: AnyPgColumn | SQL.Aliased;
  revenue: AnyPgColumn | SQL.Aliased;
}

/** The aggregates behind `SessionMetrics`, over any relation with the session columns. */
export function metricColumns(s: SessionColumns) {
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
