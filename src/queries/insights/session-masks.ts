import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { connectionsOpen, type Database } from "../../db/client";
import { sessionDayBits, visitorDayBits } from "../../db/schema";
import { dimensionValueCondition } from "../filter-conditions";
import { timestampArray } from "../sql-helpers";
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

/**
 * The filters' strings of `table` in the window, combined per day and block of sessions (or chunk
 * of visitors): rows `day`, `chunk` (the block, for session strings), `strings`. A block where
 * some filter keeps nothing has no row.
 */
function combinedStrings(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  window: DayPart,
  table: typeof sessionDayBits | typeof visitorDayBits,
): SQL {
  const [chunk, strings] =
    table === visitorDayBits
      ? [visitorDayBits.chunk, visitorDayBits.visitors]
      : [sessionDayBits.block, sessionDayBits.sessions];
  const kept = filters.map(
    ({ dimension, filter }, index) => sql`
      select ${index} as filter, ${table.day} as day, ${chunk} as chunk, ${strings} as strings from ${table}
      where ${table.projectId} = ${scope.projectId} and ${table.dimension} = ${dimension}
        and ${table.day} >= ${new Date(window.start)} and ${table.day} < ${new Date(window.end)}
        ${window.days ? sql`and ${table.day} = any(${timestampArray([...window.days])})` : sql``}
        and ${dimensionValueCondition(filter, table.name)}`,
  );
  return sql`
    select day, chunk, bit_and(strings) as strings
    from (
      select filter, day, chunk, bit_or(strings) as strings from (${sql.join(kept, sql` union all `)}) as kept
      group by filter, day, chunk
    ) as per_filter
    group by day, chunk having count(*) = ${filters.length}`;
}

/** The masks of the window's days, per block of each day's sessions: `day`, `block`, `mask`. */
export function dayMasks(scope: SessionScope, filters: readonly BitStringFilter[], window: DayPart): SQL {
  return sql`select day, chunk as block, strings as mask from (${combinedStrings(scope, filters, window, sessionDayBits)}) as combined`;
}

/** The visitors of the window's days kept by every filter: `day`, `chunk`, `visitors`. */
export function dayVisitors(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  window: TimeWindow,
): SQL {
  return sql`select day, chunk, strings as visitors from (${combinedStrings(scope, filters, window, visitorDayBits)}) as combined`;
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
