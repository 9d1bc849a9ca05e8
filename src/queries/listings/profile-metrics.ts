import { and, eq, gte, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events, sessions } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";
import type { ProfileMetrics } from "../../schemas/profiles";
import { eventConditions, sessionConditions } from "../filter-conditions";
import type { TimeWindow } from "../insights/model";
import { isoText, ratio, toNumber } from "../sql-helpers";

export interface ProfileMetricsScope {
  projectId: string;
  profileId: string;
  window: TimeWindow;
  timezone: string;
  filters: Filter[];
}

const MINUTE_MS = 60_000;

/**
 * `/profiles/{profileId}/metrics` (contract A3): the figures of its events of the window that pass
 * the filters, and of the sessions it is the visitor of that started in the window and pass them
 * as section 3 says. Two index reads, (project, profile, time) on events and on sessions.
 */
export async function profileMetrics(
  db: Database,
  scope: ProfileMetricsScope,
): Promise<Omit<ProfileMetrics, "meta">> {
  const window = { start: new Date(scope.window.start), end: new Date(scope.window.end) };
  const e = events;
  const eventQuery = db
    .select({
      first: sql<string | null>`${isoText(sql`min(${e.createdAt})`)}`,
      last: sql<string | null>`${isoText(sql`max(${e.createdAt})`)}`,
      screenViews: sql<string>`count(*) filter (where ${e.name} = 'screen_view')`,
      totalEvents: sql<string>`count(*)`,
      conversionEvents: sql<string>`count(*) filter (where ${e.name} not in ('screen_view', 'session_start', 'session_end'))`,
      uniqueDaysActive: sql<string>`count(distinct (${e.createdAt} at time zone ${scope.timezone})::date)`,
      revenue: sql<string>`coalesce(sum(${e.revenue}), 0)`,
    })
    .from(e)
    .where(
      and(
        eq(e.projectId, scope.projectId),
        eq(e.profileId, scope.profileId),
        gte(e.createdAt, window.start),
        lt(e.createdAt, window.end),
        eventConditions(scope.filters),
      ),
    );
  const s = sessions;
  const lasting = sql`${s.durationMs} > 0`;
  const sessionQuery = db
    .select({
      sessions: sql<string>`count(*)`,
      avgDurationMin: ratio(
        sql`sum(${s.durationMs}) filter (where ${lasting})`,
        sql`count(*) filter (where ${lasting}) * ${MINUTE_MS}`,
      ),
      p90DurationMin: sql<string>`coalesce(round((percentile_cont(0.9) within group (order by ${s.durationMs}) filter (where ${lasting}))::numeric / ${MINUTE_MS}, 2), 0)`,
      avgEvents: ratio(sql`sum(${s.eventCount})`, sql`count(*)`),
      avgBetweenSec: ratio(
        sql`extract(epoch from max(${s.startedAt}) - min(${s.startedAt}))`,
        sql`(count(*) - 1)`,
      ),
      bounceRate: ratio(sql`count(*) filter (where ${s.isBounce})`, sql`count(*)`, 100),
    })
    .from(s)
    .where(
      and(
        eq(s.projectId, scope.projectId),
        eq(s.profileId, scope.profileId),
        gte(s.startedAt, window.start),
        lt(s.startedAt, window.end),
        sessionConditions(scope.filters, { window }),
      ),
    );
  const [[eventFigures], [sessionFigures]] = await Promise.all([eventQuery, sessionQuery]);
  return {
    profileId: scope.profileId,
    firstSeen: eventFigures?.first ?? null,
    lastSeen: eventFigures?.last ?? null,
    sessions: toNumber(sessionFigures?.sessions),
    screenViews: toNumber(eventFigures?.screenViews),
    totalEvents: toNumber(eventFigures?.totalEvents),
    conversionEvents: toNumber(eventFigures?.conversionEvents),
    uniqueDaysActive: toNumber(eventFigures?.uniqueDaysActive),
    avgSessionDurationMin: toNumber(sessionFigures?.avgDurationMin),
    p90SessionDurationMin: toNumber(sessionFigures?.p90DurationMin),
    avgEventsPerSession: toNumber(sessionFigures?.avgEvents),
    avgTimeBetweenSessionsSec: toNumber(sessionFigures?.avgBetweenSec),
    bounceRate: toNumber(sessionFigures?.bounceRate),
    revenue: toNumber(eventFigures?.revenue),
  };
}
