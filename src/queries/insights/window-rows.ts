import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { rollupTimezones, type sessionBitTimezones } from "../../db/schema";
import { addLocalDays, HOUR_MS, startOfLocalDay } from "../../lib/timezone";
import type { SessionScope, TimeWindow } from "./model";

/**
 * Which rollup rows make up a window: the day rows of its whole project days, the hour rows of the
 * rest. Day rows count only while they were built in the project's current timezone.
 */

/** A record of the zone each project's rows per day were built in: rollup_timezones and the like. */
type ZoneRecord = typeof rollupTimezones | typeof sessionBitTimezones;

/** Whether `record` says the project's rows per day were built in its current timezone. */
export function recordedInProjectZone(record: ZoneRecord, scope: SessionScope): SQL {
  return sql`exists (select 1 from ${record} where ${record.projectId} = ${scope.projectId} and ${record.timezone} = ${scope.projectTimezone})`;
}

/** Whether the project's day rows were built in its current timezone (rollup_timezones). */
export function daysBuilt(scope: SessionScope): SQL {
  return recordedInProjectZone(rollupTimezones, scope);
}

/** The rollup families: their hour table, their day table, and the columns both share. */
const FAMILIES = {
  sessions: {
    hours: "session_rollups",
    days: "session_day_rollups",
    columns: "dimension, name, prefix, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue",
  },
  pages: {
    hours: "page_rollups",
    days: "page_day_rollups",
    columns: "origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views",
  },
  visitors: { hours: "visitor_sketches", days: "visitor_day_sketches", columns: "plane, registers" },
  entryExit: {
    hours: "entry_exit_rollups",
    days: "entry_exit_day_rollups",
    columns: "mode, origin, path, sessions, bounces, screen_views, revenue",
  },
} as const;

/**
 * The whole days of the project's timezone inside the window that no bucket edge cuts, when every
 * one of them starts and ends on a whole UTC hour (so its day row equals its hours): their day
 * rows stand in for their hours. An empty window (at the window start) when there are none.
 */
export function wholeProjectDays(scope: SessionScope, buckets: readonly number[]): TimeWindow {
  const timezone = scope.projectTimezone;
  const none = { start: scope.window.start, end: scope.window.start };
  let start = startOfLocalDay(scope.window.start, timezone);
  if (start < scope.window.start) start = addLocalDays(start, 1, timezone);
  const end = startOfLocalDay(scope.window.end, timezone);
  if (start >= end) return none;
  for (let midnight = start; midnight <= end; midnight = addLocalDays(midnight, 1, timezone)) {
    if (midnight % HOUR_MS !== 0) return none;
  }
  const cut = buckets.some((edge) => edge > start && edge < end && startOfLocalDay(edge, timezone) !== edge);
  return cut ? none : { start, end };
}

/**
 * The rollup rows of a family covering the window, each with its `unit` start instant: day rows
 * for the whole project days, hour rows for the rest. Day rows count only if they were built in
 * the project's current timezone (rollup_timezones); otherwise the hours serve those days too.
 * Four index range scans, one per part; `condition` narrows every part (a dimension).
 */
export function windowRows(
  family: keyof typeof FAMILIES,
  scope: SessionScope,
  buckets: readonly number[],
  condition?: SQL,
): SQL {
  const { hours, days, columns } = FAMILIES[family];
  const whole = wholeProjectDays(scope, buckets);
  const at = (instant: number) => new Date(instant);
  const list = sql.raw(columns);
  const also = condition ? sql` and ${condition}` : sql``;
  const built = daysBuilt(scope);
  const hourRows = (from: number, to: number, extra: SQL = sql``) =>
    sql`select ${list}, hour as unit from ${sql.identifier(hours)} where project_id = ${scope.projectId} and hour >= ${at(from)} and hour < ${at(to)}${extra}${also}`;
  return sql`(
    select ${list}, day as unit from ${sql.identifier(days)}
    where project_id = ${scope.projectId} and day >= ${at(whole.start)} and day < ${at(whole.end)} and ${built}${also}
    union all ${hourRows(scope.window.start, whole.start)}
    union all ${hourRows(whole.end, scope.window.end)}
    union all ${hourRows(whole.start, whole.end, sql` and not ${built}`)}
  ) as units`;
}

/** Whether the project's day rows were built in its current timezone, as one small query. */
export async function projectDaysBuilt(db: Database, scope: SessionScope): Promise<boolean> {
  const result = await db.execute<{ built: boolean }>(sql`select ${daysBuilt(scope)} as built`);
  return result.rows[0]?.built === true;
}

/**
 * Rows of a window from a table of day rows and, for what they leave, from the exact source: the
 * hours before and after its whole project days; the whole window while the day rows are not
 * built in the project's current timezone (`built`, asked beforehand with projectDaysBuilt). With
 * the rows built, at most two partial days are read exactly. `dayRows` selects the rows of the
 * whole days and `exactRows` those of a part of the window, in the same columns. The flag is
 * decided before the statement rather than inside it: an exact part guarded by a condition is
 * still planned as a parallel scan of the window, and launching its workers costs 50-100 ms.
 */
export function daysWithExactParts(
  scope: SessionScope,
  built: boolean,
  dayRows: (whole: TimeWindow) => SQL,
  exactRows: (window: TimeWindow) => SQL,
): SQL {
  if (!built) return exactRows(scope.window);
  const whole = wholeProjectDays(scope, []);
  const parts = [
    ...(whole.start < whole.end ? [dayRows(whole)] : []),
    ...[
      { start: scope.window.start, end: whole.start },
      { start: whole.end, end: scope.window.end },
    ]
      .filter((part) => part.start < part.end)
      .map(exactRows),
  ];
  // An empty window (no whole day, no remainder) still needs a statement of the right columns.
  return parts.length > 0 ? sql.join(parts, sql` union all `) : exactRows(scope.window);
}
