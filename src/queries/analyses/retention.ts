import { and, eq, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events, retentionWeeks } from "../../db/schema";
import { eventConditions } from "../filter-conditions";
import { toNumber } from "../sql-helpers";
import { type ActivitySource, activityAggregatesAnswer, dateOfDay, dayNumber } from "./activity-source";

export interface RetentionScope extends ActivitySource {
  /** The window's weeks as Monday-week numbers (see weekNumberSql): the first and the last. */
  firstWeek: number;
  lastWeek: number;
  /** The end of the window's last week: events at or after it are never read. */
  readUntil: number;
}

/** A user's activity in one week: (profile, week). */
export interface WeekCount {
  /** The first week of the row's users (its cohort), or the week counted. */
  week: number;
  /** Weeks after `week`. */
  offset: number;
  users: number;
}

/**
 * An instant's local Monday week in `timezone`, numbered so that weeks of the same number run
 * Monday to Sunday: (days since 1970-01-01, a Thursday, + 3) div 7.
 */
const weekNumberSql = (timezone: string) =>
  sql`floor((((${events.createdAt} at time zone ${timezone})::date - date '1970-01-01') + 3) / 7.0)::int`;

/** A Monday week number as its Monday's `date` (the inverse of weekNumberSql). */
const mondayOf = (week: number) => dateOfDay(week * 7 - 3);
/** The week number of a Monday `date` column. */
const weekOf = (column: unknown) => sql`((${dayNumber(column)} + 3) / 7)`;

/** The (week, offset, users) rows of `select`, summed per (week, offset). */
async function weekCounts(db: Database, select: SQL): Promise<WeekCount[]> {
  const result = await db.execute<{ week: number; offset: number; users: number | string }>(sql`
    select week, "offset", sum(users) as users from (${select}) as cells group by 1, 2`);
  return result.rows.map((row) => ({
    week: toNumber(row.week),
    offset: toNumber(row.offset),
    users: toNumber(row.users),
  }));
}

/**
 * The identified events that pass the filters, as distinct (profile, week) pairs of every week
 * up to the window's last (the first week ever decides a user's cohort, contract A6).
 */
function activityWeeks(scope: RetentionScope) {
  return sql`select distinct ${events.profileId} as profile_id, ${weekNumberSql(scope.timezone)} as week
    from ${events}
    where ${and(
      eq(events.projectId, scope.projectId),
      lt(events.createdAt, new Date(scope.readUntil)),
      sql`${events.profileId} <> ${events.deviceId}`,
      eventConditions(scope.filters),
    )}`;
}

/**
 * `/retention/cohort`: per cohort (the week of a user's first identified event ever, inside the
 * window) the users active `offset` weeks later (`on`), or whose last active week of the window is
 * `offset` weeks after the cohort's (`on_or_after`, summed into cells by the caller).
 */
export async function cohortActivity(
  db: Database,
  scope: RetentionScope,
  criteria: "on" | "on_or_after",
): Promise<WeekCount[]> {
  if (await activityAggregatesAnswer(db, scope)) {
    // Each member's weeks up to the window's last: `on` counts them all, `on_or_after` only its
    // last one there (its next active week is after the window, or none).
    const lastMonday = mondayOf(scope.lastWeek);
    return weekCounts(
      db,
      sql`select ${weekOf(retentionWeeks.cohort)} as week,
          (${retentionWeeks.week} - ${retentionWeeks.cohort}) / 7 as "offset", ${retentionWeeks.users} as users
        from ${retentionWeeks}
        where ${and(
          eq(retentionWeeks.projectId, scope.projectId),
          sql`${retentionWeeks.cohort} between ${mondayOf(scope.firstWeek)} and ${lastMonday}`,
          sql`${retentionWeeks.week} <= ${lastMonday}`,
          criteria === "on_or_after"
            ? sql`(${retentionWeeks.nextWeek} is null or ${retentionWeeks.nextWeek} > ${lastMonday})`
            : undefined,
        )}`,
    );
  }
  const counted =
    criteria === "on"
      ? sql`select m.cohort as week, a.week - m.cohort as "offset", count(*) as users
          from members m join activity a on a.profile_id = m.profile_id
          group by 1, 2`
      : sql`select m.cohort as week, max(a.week) - m.cohort as "offset", 1 as users
          from members m join activity a on a.profile_id = m.profile_id
          group by m.profile_id, m.cohort`;
  return weekCounts(
    db,
    sql`with activity as (${activityWeeks(scope)}),
    members as (
      select profile_id, min(week) as cohort from activity group by profile_id
      having min(week) between ${scope.firstWeek}::int and ${scope.lastWeek}::int
    )
    ${counted}`,
  );
}

/**
 * `/retention`: per week of the window, the identified users active in it (`offset` 0) and those
 * also active the week after (`offset` 1), looked up after the window too.
 */
export async function weeklyReturn(db: Database, scope: RetentionScope): Promise<WeekCount[]> {
  if (await activityAggregatesAnswer(db, scope)) {
    // Every user of a week, whatever its cohort; those whose next active week is the one after.
    const weeks = and(
      eq(retentionWeeks.projectId, scope.projectId),
      sql`${retentionWeeks.week} between ${mondayOf(scope.firstWeek)} and ${mondayOf(scope.lastWeek)}`,
    );
    return weekCounts(
      db,
      sql`select ${weekOf(retentionWeeks.week)} as week, 0 as "offset", ${retentionWeeks.users} as users
          from ${retentionWeeks} where ${weeks}
        union all
        select ${weekOf(retentionWeeks.week)}, 1, ${retentionWeeks.users}
          from ${retentionWeeks} where ${weeks} and ${retentionWeeks.nextWeek} = ${retentionWeeks.week} + 7`,
    );
  }
  return weekCounts(
    db,
    sql`with activity as (${activityWeeks({ ...scope, readUntil: scope.readUntil + 7 * 86_400_000 })})
    select a.week, 0 as "offset", count(*) as users from activity a
      where a.week between ${scope.firstWeek}::int and ${scope.lastWeek}::int group by 1
    union all
    select a.week, 1, count(*) from activity a join activity b on b.profile_id = a.profile_id and b.week = a.week + 1
      where a.week between ${scope.firstWeek}::int and ${scope.lastWeek}::int group by 1`,
  );
}
