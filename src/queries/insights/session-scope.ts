import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { sessions } from "../../db/schema";
import { sessionConditions } from "../filter-conditions";
import { ratio } from "../sql-helpers";
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
