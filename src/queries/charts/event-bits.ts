import { eq, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  derivedState,
  eventBitTimezones,
  eventDayBits,
  eventPropertyDayPaths,
  events,
  projects,
} from "../../db/schema";
import { CHART_PAIR_COLUMNS, propertyStringDimension } from "../../lib/dimensions";
import type { Filter, FilterColumn, FilterField } from "../../lib/filter-parser";
import {
  combinedDayStrings,
  type DayStrings,
  type PropertyDayPaths,
  propertyDaysLacking,
} from "../day-strings";
import { propertyStringsAnswer } from "../property-leaves";
import {
  type BucketValues,
  breakdownValue,
  type ChartSegment,
  type ChartSeriesQuery,
  scanStart,
} from "./model";
import { bucketedUnits, builtInProjectZone, edgesStartLocalDays } from "./rollups";
import { newSeriesEvents, sameAmounts, unitColumns } from "./units";

/**
 * The event segment of a chart filtered on more columns than a pair of them, from the bit strings
 * per project day over the day's events (src/db/routines/refresh_event_bits.sql): per day and
 * block of its events, the AND of each filter's strings (the OR of those of the values it keeps)
 * and of the series' event name is the block's matching events, and its bit count with each value
 * of the breakdown is that group's events. The pair rows (rollups.ts) answer a chart of one or two
 * columns besides the name; these answer any number, with one breakdown at most. Like the rows,
 * the strings hold exactly the events below the event rollups' watermark, and the events at or
 * above it are added from `events`, so the answer is exact at any moment.
 */

/** The columns with strings: the event name and CHART_PAIR_COLUMNS. */
const STRING_COLUMNS: ReadonlySet<FilterColumn> = new Set<FilterColumn>(["name", ...CHART_PAIR_COLUMNS]);

/** The event strings, per block of each day's events. */
const EVENT_STRINGS: DayStrings = {
  table: eventDayBits,
  projectId: eventDayBits.projectId,
  day: eventDayBits.day,
  chunk: eventDayBits.block,
  dimension: eventDayBits.dimension,
  name: eventDayBits.name,
  strings: eventDayBits.events,
};

const stringColumn = (field: FilterField | undefined): FilterColumn | undefined =>
  field?.kind === "column" && STRING_COLUMNS.has(field.column) ? field.column : undefined;

/** A filter's strings: a column's, or a property path's (propertyStringsAnswer says for which operators). */
const filterDimension = (filter: Filter): string | undefined =>
  filter.field.kind === "property"
    ? propertyStringsAnswer(filter) && propertyStringDimension(filter.field.path)
    : stringColumn(filter.field);

/** The segments the strings answer: events from their bit counts, visitors and sessions from event-members.ts. */
const STRING_SEGMENTS: ReadonlySet<ChartSegment> = new Set<ChartSegment>(["event", "user", "session"]);

/**
 * Whether the strings may answer a series: the `event`, `user` or `session` segment, at least one filter, every filter
 * and the breakdown (one at most) on a column with strings, and no filter the strings cannot tell
 * from the events: a value that is "" or a `regex` (the strings keep empty strings and NULL alike as
 * not set, as the rollups do). The window and buckets are checked against the strings' zone
 * (eventBitsSource).
 */
export function eventBitsCover(query: ChartSeriesQuery): boolean {
  if (!query.rollups || !STRING_SEGMENTS.has(query.segment)) return false;
  if (query.filters.length === 0 || query.breakdowns.length > 1) return false;
  return (
    query.filters.every((filter) => filterDimension(filter) !== undefined) &&
    query.breakdowns.every((field) => stringColumn(field) !== undefined) &&
    query.filters.every(
      (filter) => filter.operator !== "regex" && !filter.values.some((value) => String(value) === ""),
    )
  );
}

/** What a covered series is read with: the zone of the strings' days and the watermark under them. */
export interface EventBitsSource {
  timeZone: string;
  watermark: number;
}

/**
 * The zone and watermark of the strings when they answer the series (eventBitsCover), else
 * undefined for another path: only when they were built in the project's zone, every window and
 * bucket edge starts one of its days, and each property filter's path has strings on every day
 * scanned (propertyDaysMissing). One round trip.
 */
export async function eventBitsSource(
  db: Database,
  query: ChartSeriesQuery,
): Promise<EventBitsSource | undefined> {
  if (!eventBitsCover(query)) return undefined;
  const missing = propertyDaysMissing(query);
  const [zone] = await db
    .select({
      timeZone: eventBitTimezones.timezone,
      watermark: sql<string | null>`(select ${derivedState.processedXid} from ${derivedState}
        where ${derivedState.name} = 'event_rollups')`,
      missing: missing ?? sql<boolean>`false`,
    })
    .from(eventBitTimezones)
    .leftJoin(projects, eq(projects.id, eventBitTimezones.projectId))
    .where(builtInProjectZone(eventBitTimezones, query.projectId));
  if (!zone || zone.missing || !edgesStartLocalDays(query, zone.timeZone)) return undefined;
  return { timeZone: zone.timeZone, watermark: Number(zone.watermark ?? 0) };
}

/**
 * Whether a day of the scanned range lacks the strings of a property filter's path: the path
 * passed a bound there (event_property_day_paths, NULL values), or, for an operator that may match
 * what the values do not hold (propertyStringsAnswer `rows`), an event of that day holds an object, an
 * array or a long text at the path. A day without a row for the path has no event with it.
 * Undefined without property filters.
 */
function propertyDaysMissing(query: ChartSeriesQuery): SQL<boolean> | undefined {
  const days = { start: scanStart(query), end: query.current.window.end };
  const tests = query.filters.flatMap((filter) => {
    const answer = propertyStringsAnswer(filter);
    if (filter.field.kind !== "property" || answer === undefined) return [];
    const marked = answer === "rows" ? sql`${eventPropertyDayPaths.marked}` : undefined;
    return [propertyDaysLacking(EVENT_PROPERTY_DAY_PATHS, query.projectId, filter.field.path, days, marked)];
  });
  return tests.length > 0 ? sql<boolean>`(${sql.join(tests, sql` or `)})` : undefined;
}

/** Which property paths have event strings per day. */
const EVENT_PROPERTY_DAY_PATHS: PropertyDayPaths = {
  table: eventPropertyDayPaths,
  projectId: eventPropertyDayPaths.projectId,
  day: eventPropertyDayPaths.day,
  path: eventPropertyDayPaths.path,
  names: eventPropertyDayPaths.names,
};

/** The series' event name as one more filter on the strings of the name. */
function nameFilter(event: string): Filter {
  return {
    field: { kind: "column", column: "name", scope: "event", numeric: false },
    operator: "is",
    values: [event],
    index: -1,
  };
}

/**
 * Per day and block, the series' events of the scanned range whatever their breakdown value: rows
 * `day`, `block` and `mask`, a string with a bit per event of the block. A block where some filter
 * keeps nothing has no row. With `only` (local midnights), only those days of it.
 */
export function matchingMasks(query: ChartSeriesQuery, only?: readonly number[]): SQL {
  const filters = query.event === "*" ? query.filters : [...query.filters, nameFilter(query.event)];
  const kept = filters.map((filter) => ({ dimension: filterDimension(filter) ?? "", filter }));
  const days = { start: scanStart(query), end: query.current.window.end, days: only };
  return sql`select day, chunk as block, strings as mask
    from (${combinedDayStrings(EVENT_STRINGS, query.projectId, kept, days)}) as combined`;
}

/**
 * The rows of `masks` (matchingMasks' columns, a subquery or a CTE's name) split by the breakdown:
 * rows `day`, `block`, `b0` (null without a breakdown) and `events`; with a breakdown, a value the
 * block has no string for has none.
 */
export function breakdownGroups(query: ChartSeriesQuery, masks: SQL): SQL {
  const breakdown = stringColumn(query.breakdowns[0]);
  if (breakdown === undefined)
    return sql`select m.day, m.block, null::text as b0, m.mask as events from ${masks} as m`;
  return sql`
    select m.day, m.block, b.name as b0, m.mask & b.events as events
    from ${masks} as m
    join ${eventDayBits} as b on b.project_id = ${query.projectId} and b.dimension = ${breakdown}
      and b.day = m.day and b.block = m.block`;
}

/**
 * Per day, block and breakdown value, the series' events of the scanned range: rows `day`,
 * `block`, `b0` (null without a breakdown) and `events`, a string with a bit per event of the
 * block. A block where some filter keeps nothing has no row; with a breakdown, a value the block
 * has no string for has none either. With `only` (local midnights), only those days of it.
 */
export function matchingEvents(query: ChartSeriesQuery, only?: readonly number[]): SQL {
  return breakdownGroups(query, sql`(${matchingMasks(query, only)})`);
}

/**
 * A lateral subquery of the set bits of a block's string, each as its `position` in the block: the
 * string's text cut at each '1' leaves the runs of '0' before each set bit (and a last run after
 * the last one), so the running sum of the runs' lengths plus one is each set bit's position (the
 * last run, after the last set bit, is cut off). One C-level pass over the string, then a row per
 * set bit.
 */
export function setBitPositions(bits: SQL): SQL {
  return sql`(
    select (sum(length(u.run) + 1) over (order by u.i) - 1)::integer as position
    from (select string_to_array(${bits}::text, '1') as runs) as cut
    cross join lateral unnest(cut.runs[1:cardinality(cut.runs) - 1]) with ordinality as u(run, i)
  )`;
}

/**
 * Per day and breakdown value, the events of the scanned range the strings count: rows `unit` (the
 * day's start), `b0` and `events`, none of 0: only groups with an event, as on the exact path (a
 * value of the block none of whose events match is no group, and a group of the previous period
 * alone is no series).
 */
function stringCounts(query: ChartSeriesQuery): SQL {
  return sql`select g.day as unit, g.b0, sum(bit_count(g.events))::bigint as events
    from (${matchingEvents(query)}) as g group by 1, 2 having sum(bit_count(g.events)) > 0`;
}

/**
 * The bucket values of a covered series (eventBitsSource): the strings' counts per day and
 * breakdown value, and each event at or above their watermark as a unit of one, bucketed like the
 * rollups' units (rollups.ts).
 */
export function eventBitsBucketValues(
  db: Database,
  query: ChartSeriesQuery,
  source: EventBitsSource,
): BucketValues {
  const none = sameAmounts(sql`0::bigint`);
  const counted = db
    .select(unitColumns(sql`unit`, sql`b0`, sql`events`, none))
    .from(sql`(${stringCounts(query)}) as string_counts`);
  const newEvents = db
    .select(unitColumns(events.createdAt, breakdownValue(query.breakdowns[0]), sql`1::bigint`, none))
    .from(events)
    .where(newSeriesEvents(query, source.watermark));
  return bucketedUnits(db, query, counted.unionAll(newEvents).as("units"));
}
