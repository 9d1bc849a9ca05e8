import { and, eq, gte, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";
import { eventConditions } from "../filter-conditions";
import { toNumber } from "../sql-helpers";

export interface ActiveUsersScope {
  projectId: string;
  timezone: string;
  filters: Filter[];
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
 * `/active_users` (contract A6): for each local day D from firstDay to lastDay, the distinct users
 * with an event on days D − days + 1 … D. Each user's active days are read once; active day a
 * covers the points a … a + days − 1 up to the user's next active day, so the spans of one user
 * never overlap, and a point's count is the number of spans holding it: +1 where a span starts,
 * −1 where it ends, summed in day order. Exact, and one pass over the (user, day) pairs.
 */
export async function activeUsersSeries(db: Database, scope: ActiveUsersScope): Promise<number[]> {
  const localDay = sql`((${events.createdAt} at time zone ${scope.timezone})::date - date '1970-01-01')`;
  const result = await db.execute<{ day: number | string; users: number | string }>(sql`
    with active_days as (
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
        least(day + ${scope.days}::int, coalesce(lead(day) over (partition by profile_id order by day), day + ${scope.days}::int)) as covers_until
      from active_days
    ),
    changes as (
      select day, sum(change) as change
      from (select covers_from as day, 1 as change from spans union all select covers_until, -1 from spans) as edges
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
