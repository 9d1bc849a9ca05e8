import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { connectionsOpen, type Database } from "../../db/client";
import { sessionDayBits, visitorDayBits } from "../../db/schema";
import { combinedDayStrings, type DayStrings } from "../day-strings";
import type { BitStringFilter, DayPart, SessionScope, TimeWindow } from "./model";
import { projectDaysBuilt, wholeProjectDays } from "./window-rows";

/**
 * The strings of two or three filters combined, per day (src/db/routines/refresh_session_bits.sql):
 * the OR of the strings of the values each filter keeps, ANDed over the filters. Over the session
 * strings, per block of the day's session numbers, that is the block's mask of matching sessions
 * (session-bits.ts sums it); over the visitor strings, per chunk, the visitors with a session of
 * each kept value (combined-visitors.ts).
 */

/**
 * Whether the window is whole project days that no bucket edge cuts, with their strings built. An
 * answer from the strings that will run `atOnce` statements side by side (the window's parts, the
 * visitors beside the sums, a page's revenue beside its rows) has their connections opened while
 * this is asked.
 */
export async function bitStringsCover(
  db: Database,
  scope: SessionScope,
  buckets: readonly number[],
  atOnce = 1,
): Promise<boolean> {
  const whole = wholeProjectDays(scope, buckets);
  if (whole.start !== scope.window.start || whole.end !== scope.window.end) return false;
  const [built] = await Promise.all([projectDaysBuilt(db, scope), connectionsOpen(db, atOnce)]);
  return built;
}

/** The session strings, per block of each day's sessions. */
const SESSION_STRINGS: DayStrings = {
  table: sessionDayBits,
  projectId: sessionDayBits.projectId,
  day: sessionDayBits.day,
  chunk: sessionDayBits.block,
  dimension: sessionDayBits.dimension,
  name: sessionDayBits.name,
  strings: sessionDayBits.sessions,
};

/** The visitor strings, per chunk of the project's visitors. */
const VISITOR_STRINGS: DayStrings = {
  table: visitorDayBits,
  projectId: visitorDayBits.projectId,
  day: visitorDayBits.day,
  chunk: visitorDayBits.chunk,
  dimension: visitorDayBits.dimension,
  name: visitorDayBits.name,
  strings: visitorDayBits.visitors,
};

/** The masks of the window's days, per block of each day's sessions: `day`, `block`, `mask`. */
export function dayMasks(scope: SessionScope, filters: readonly BitStringFilter[], window: DayPart): SQL {
  return sql`select day, chunk as block, strings as mask
    from (${combinedDayStrings(SESSION_STRINGS, scope.projectId, filters, window)}) as combined`;
}

/** The visitors of the window's days kept by every filter: `day`, `chunk`, `visitors`. */
export function dayVisitors(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  window: TimeWindow,
): SQL {
  return sql`select day, chunk, strings as visitors
    from (${combinedDayStrings(VISITOR_STRINGS, scope.projectId, filters, window)}) as combined`;
}

/**
 * The weight of one slice over the sessions in `matched`: 2^slice per matching session with bit
 * `slice` set (numeric, as a slice of revenue may reach bit 62).
 */
export function sliceWeight(matched: SQL, slice: SQL | AnyColumn, strings: SQL | AnyColumn): SQL {
  return sql`bit_count(${matched} & ${strings})::numeric * (1::bigint << ${slice})`;
}

/** The summed weight of one measure's slices over the sessions in `matched`. */
export function slicedSum(matched: SQL, slice: SQL | AnyColumn, strings: SQL | AnyColumn): SQL {
  return sql`sum(${sliceWeight(matched, slice, strings)})`;
}
