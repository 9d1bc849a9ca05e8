import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { activeUserDays, events } from "../../db/schema";
import { eventConditions } from "../filter-conditions";
import { toNumber } from "../sql-helpers";
import { type ActivitySource, activityAggregatesAnswer, dateOfDay, dayNumber } from "./activity-source";

export interface ActiveUsersScope extends ActivitySource {
  identifiedOnly: boolean;
  /** Days counted back from each point, the point's day included (1–90). */
  days: number;
  /** The series' first and last local day, as days since 1970-01-01 in `timezone`. */
  firstDay: number;
  lastDay: number;
  /** The instants that bound the events read: the start of firstDay − (days − 1) and the end of lastDay. */
  readFrom: number;
  readUntil: number;
}

/**
 * The spans of the exact path: each user's active days, read once from the events; active day a
 * covers the points a … a + days − 1 up to the user's next active day, so the spans of one user
 * never overlap.
 */
function spansFromEvents(scope: ActiveUsersScope): SQL {
  const localDay = sql`((${events.createdAt} at time zone ${scope.timezone})::date - date '1970-01-01')`;
  return sql`active_days as (
      select distinct ${events.profileId} as profile_id, ${localDay} as day
      from ${events}
      where ${and(
        eq(events.projectId, scope.projectId),
        gte(events.createdAt, new Date(scope.readFrom)),
        lt(events.createdAt, new Date(scope.readUntil)),
        scope.identifiedOnly ? sql`${events.profileId} <> ${events.deviceId}` : undefined,
        eventConditions(scope.filters),
      )}
    ),
    spans as (
      select day as covers_from,
        least(day + ${scope.days}::int, coalesce(lead(day) over (partition by profile_id order by day), day + ${scope.days}::int)) as covers_until,
        1 as users
      from active_days
    )`;
}

/**
 * The spans of the aggregates (active_user_days): the users of day d whose previous active day was
 * `gap` days before cover the points d + max(0, days − gap) … d + days − 1, the same spans summed.
 */
function spansFromAggregates(scope: ActiveUsersScope): SQL {
  const day = dayNumber(activeUserDays.day);
  return sql`spans as (
      select ${day} + greatest(0, ${scope.days}::int - ${activeUserDays.gap}) as covers_from,
        ${day} + ${scope.days}::int as covers_until, ${activeUserDays.users} as users
      from ${activeUserDays}
      where ${and(
        eq(activeUserDays.projectId, scope.projectId),
        eq(activeUserDays.identified, scope.identifiedOnly),
        sql`${activeUserDays.day} between ${dateOfDay(scope.firstDay - scope.days + 1)} and ${dateOfDay(scope.lastDay)}`,
      )}
    )`;
}

/**
 * `/active_users` (contract A6): for each local day D from firstDay to lastDay, the distinct users
 * with an event on days D − days + 1 … D. A point's count is the number of spans holding it: +users
 * where a span starts, −users where it ends, summed in day order. Exact either way; without
 * filters, in the project's timezone, the spans come from the activity aggregates (a few rows per
 * day) instead of the events.
 */
export async function activeUsersSeries(db: Database, scope: ActiveUsersScope): Promise<number[]> {
  const spans = (await activityAggregatesAnswer(db, scope))
    ? spansFromAggregates(scope)
    : spansFromEvents(scope);
  const result = await db.execute<{ day: number | string; users: number | string }>(sql`
    with ${spans},
    changes as (
      select day, sum(change) as change
      from (select covers_from as day, users as change from spans union all select covers_until, -users from spans) as edges
      group by day
    )
    select day, sum(change) over (order by day) as users
    from (
      select day, sum(change) as change from (
        select generate_series(${scope.firstDay}::int, ${scope.lastDay}::int) as day, 0::bigint as change
        union all select day, change from changes where day <= ${scope.lastDay}::int
      ) as all_days group by day
    ) as per_day
    order by day`);
  const byDay = new Map(result.rows.map((row) => [toNumber(row.day), toNumber(row.users)]));
  return Array.from(
    { length: scope.lastDay - scope.firstDay + 1 },
    (_, i) => byDay.get(scope.firstDay + i) ?? 0,
  );
}
