import { and, eq, gte, isNotNull, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { activeUserDays, events, profileSummaries } from "../../db/schema";
import { eventConditions } from "../filter-conditions";
import type { TimeWindow } from "../insights/model";
import { toNumber } from "../sql-helpers";
import { type ActivitySource, activityAggregatesAnswer, dayNumber } from "./activity-source";

export interface EngagementScope extends ActivitySource {
  /** Undefined: the whole history. */
  window?: TimeWindow;
  /** The reference day, as days since 1970-01-01 in `timezone`. */
  referenceDay: number;
}

/** Days since 1970-01-01 of an instant's local day in `timezone`. */
const localDay = (instant: SQL, timezone: string) =>
  sql`((${instant} at time zone ${timezone})::date - date '1970-01-01')`;

/**
 * `/engagement` (contract A6): identified users by the local days from their last identified
 * activity to the reference day, as (days, users) rows, ascending. For the whole history without
 * filters: in the project's timezone, the users of each day that was their last identified one
 * (active_user_days, a few rows per day); in another, each profile's latest identified event from
 * its summary (src/db/schema/profile-summaries.ts). Otherwise from the window's identified events
 * that pass the filters.
 */
export async function engagementDistribution(
  db: Database,
  scope: EngagementScope,
): Promise<Array<{ days: number; users: number }>> {
  const lifetime = scope.window === undefined && scope.filters.length === 0;
  if (lifetime && (await activityAggregatesAnswer(db, scope))) {
    const result = await db.execute<{ days: number | string; users: number | string }>(sql`
      select ${scope.referenceDay}::int - ${dayNumber(activeUserDays.day)} as days, sum(${activeUserDays.users}) as users
      from ${activeUserDays}
      where ${and(eq(activeUserDays.projectId, scope.projectId), eq(activeUserDays.identified, true), eq(activeUserDays.last, true))}
      group by 1 order by 1`);
    return result.rows.map((row) => ({ days: toNumber(row.days), users: toNumber(row.users) }));
  }
  const lastActivity = lifetime
    ? sql`select ${localDay(sql`${profileSummaries.lastIdentifiedAt}`, scope.timezone)} as day
          from ${profileSummaries}
          where ${and(eq(profileSummaries.projectId, scope.projectId), isNotNull(profileSummaries.lastIdentifiedAt))}`
    : sql`select ${localDay(sql`max(${events.createdAt})`, scope.timezone)} as day
          from ${events}
          where ${and(
            eq(events.projectId, scope.projectId),
            scope.window ? gte(events.createdAt, new Date(scope.window.start)) : undefined,
            scope.window ? lt(events.createdAt, new Date(scope.window.end)) : undefined,
            sql`${events.profileId} <> ${events.deviceId}`,
            eventConditions(scope.filters),
          )}
          group by ${events.profileId}`;
  const result = await db.execute<{ days: number | string; users: number | string }>(sql`
    select ${scope.referenceDay}::int - day as days, count(*) as users
    from (${lastActivity}) as last_activity
    group by 1 order by 1`);
  return result.rows.map((row) => ({ days: toNumber(row.days), users: toNumber(row.users) }));
}
