import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { connectionsOpen, type Database } from "../../db/client";
import {
  propertyDayPaths,
  sessionBitTimezones,
  sessionDayBits,
  sessionProperties,
  visitorDayBits,
} from "../../db/schema";
import {
  combinedDayStrings,
  type DayStrings,
  type PropertyDayPaths,
  propertyDaysLacking,
} from "../day-strings";
import { propertyStringsAnswer } from "../property-leaves";
import type { BitStringFilter, DayPart, SessionScope, TimeWindow } from "./model";
import { daysBuilt, recordedInProjectZone, wholeProjectDays } from "./window-rows";

/**
 * The strings of two or three filters combined, per day (src/db/routines/refresh_session_bits.sql):
 * the OR of the strings of the values each filter keeps, ANDed over the filters. Over the session
 * strings, per block of the day's session numbers, that is the block's mask of matching sessions
 * (session-bits.ts sums it); over the visitor strings, per chunk, the visitors with a session of
 * each kept value (combined-visitors.ts).
 */

/**
 * Whether the window is whole project days that no bucket edge cuts, with their strings built (and
 * those of its property filters, propertyStringsMissing). An answer from the strings that will run
 * `atOnce` statements side by side (the window's parts, the visitors beside the sums, a page's
 * revenue beside its rows) has their connections opened while this is asked.
 */
export async function bitStringsCover(
  db: Database,
  scope: SessionScope,
  buckets: readonly number[],
  atOnce = 1,
): Promise<boolean> {
  const whole = wholeProjectDays(scope, buckets);
  if (whole.start !== scope.window.start || whole.end !== scope.window.end) return false;
  const missing = propertyStringsMissing(scope);
  const built = async () => {
    const result = await db.execute<{ built: boolean }>(
      sql`select ${daysBuilt(scope)} and ${recordedInProjectZone(sessionBitTimezones, scope)}${missing ? sql` and not ${missing}` : sql``} as built`,
    );
    return result.rows[0]?.built === true;
  };
  const [covered] = await Promise.all([built(), connectionsOpen(db, atOnce)]);
  return covered;
}

/**
 * For the property filters of the scope, whether the window's strings fall short of one: some day
 * has none for its path (it passed a bound there: property_day_paths, NULL values; a day without a
 * row for a path has no value of it), or, for an operator the property rows answer only with
 * their marks (property-leaves.ts, `rows`), some session of the window is marked there (its
 * events hold an object, an array or a long text, which the strings do not). Undefined without
 * property filters.
 */
function propertyStringsMissing(scope: SessionScope): SQL | undefined {
  const { window } = scope;
  const tests = scope.filters.flatMap((filter) => {
    const { field } = filter;
    if (field.kind !== "property") return [];
    const answer = propertyStringsAnswer(filter);
    // The strings hold no answer to a negative operator, or to a path the rows do not keep.
    if (answer === undefined) return [sql`true`];
    const pastBounds = propertyDaysLacking(PROPERTY_DAY_PATHS, scope.projectId, field.path, window);
    if (answer === "values") return [pastBounds];
    const marked = sql`exists (select 1 from ${sessionProperties}
      where ${sessionProperties.projectId} = ${scope.projectId}
        and ${sessionProperties.path} = ${sql.param([...field.path])}::text[]
        and ${sessionProperties.value} is null and ${sessionProperties.startedAt} >= ${new Date(window.start)}
        and ${sessionProperties.startedAt} < ${new Date(window.end)})`;
    return [pastBounds, marked];
  });
  return tests.length > 0 ? sql`(${sql.join(tests, sql` or `)})` : undefined;
}

/** Which property paths have session strings per day. */
const PROPERTY_DAY_PATHS: PropertyDayPaths = {
  table: propertyDayPaths,
  projectId: propertyDayPaths.projectId,
  day: propertyDayPaths.day,
  path: propertyDayPaths.path,
  names: propertyDayPaths.names,
};

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
