import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { PgColumn, SubqueryWithSelection } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import {
  derivedState,
  type eventBitTimezones,
  eventPairRollups,
  eventPairTimezones,
  eventRollups,
  events,
  projects,
} from "../../db/schema";
import { CHART_PAIR_COLUMNS, CHART_ROLLUP_COLUMNS } from "../../lib/dimensions";
import type { FilterColumn, FilterField } from "../../lib/filter-parser";
import { dayNumberDate, HOUR_MS, localDayNumber } from "../../lib/timezone";
import { dimensionValueCondition } from "../filter-conditions";
import {
  type BucketValues,
  breakdownValue,
  bucketValues,
  type ChartSegment,
  type ChartSeriesQuery,
  isPropertySegment,
  scanStart,
  unitBucketKeys,
} from "./model";
import { isDistinctSegment, newMemberUnits } from "./new-members";
import { newSeriesEvents, sameAmounts, seriesRange, unitColumns } from "./units";

/**
 * The rollup path of the chart queries: the same numbers as the exact path (exact.ts), read from
 * the event rollups that `refresh_derived()` maintains (src/db/routines/refresh_event_rollups.sql:
 * rows per hour and value of one column; refresh_event_pair_rollups.sql: rows per local day and
 * pair of values, value of one column or event name, with their distinct visitors and sessions)
 * plus the events that arrived since its last run, which it has not folded in yet. The rollups
 * hold exactly the events below the watermark, so the sum is exact at any moment.
 */

/** The columns the event rollups carry a row per value of; `name` is part of every row. */
const ROLLED_UP_COLUMNS: ReadonlySet<FilterColumn> = new Set<FilterColumn>(["name", ...CHART_ROLLUP_COLUMNS]);

/** Segments that add up over hours: counts, sums, minima and maxima (distinct counts do not). */
const ADDITIVE_SEGMENTS: ReadonlySet<ChartSegment> = new Set<ChartSegment>([
  "event",
  "property_sum",
  "property_average",
  "property_min",
  "property_max",
]);

/** The numeric columns the rollups aggregate for the property segments. */
type RolledUpAmount = "duration" | "revenue";

function rolledUpAmount(query: ChartSeriesQuery): RolledUpAmount | undefined {
  const field = query.property;
  if (field?.kind !== "column") return undefined;
  return field.column === "duration" || field.column === "revenue" ? field.column : undefined;
}

/** The field's column when the rollups carry it. */
function rolledUpColumn(field: FilterField | undefined): FilterColumn | undefined {
  return field?.kind === "column" && ROLLED_UP_COLUMNS.has(field.column) ? field.column : undefined;
}

/**
 * The rows that answer a series: those of the series' event names alone (`columns` empty), of one
 * column's values (event_rollups) or of a pair's (event_pair_rollups, `columns` in the pair's
 * order). `name` is in every row, so it is never one of the columns.
 */
interface RollupRows {
  columns: FilterColumn[];
}

/**
 * The rows that answer the series' filters and breakdown, when some do: every filter any operator
 * but `regex` on a rolled-up column, with no value that is "" (the rollups keep empty strings and
 * NULL alike as not set, and only those two tell them apart), at most one breakdown on one, and
 * besides `name` at most two columns in all, both of a rolled-up pair when there are two.
 */
function rollupRows(query: ChartSeriesQuery): RollupRows | undefined {
  if (query.breakdowns.length > 1) return undefined;
  const columns = new Set<FilterColumn>();
  for (const field of [...query.filters.map((filter) => filter.field), ...query.breakdowns]) {
    const column = rolledUpColumn(field);
    if (column === undefined) return undefined;
    if (column !== "name") columns.add(column);
  }
  const usable = query.filters.every(
    (filter) => filter.operator !== "regex" && !filter.values.some((value) => String(value) === ""),
  );
  if (!usable || columns.size > 2) return undefined;
  if (columns.size < 2) return { columns: [...columns] };
  // In the order the pairs are stored, the earlier column first.
  const pair = CHART_PAIR_COLUMNS.filter((column) => columns.has(column));
  return pair.length === 2 ? { columns: pair } : undefined;
}

/**
 * Whether each breakdown group of a day is one row, so that the row's distinct visitors or sessions
 * are the group's: the event name and every column of the rows are pinned to one value per group,
 * by the breakdown, by an `is` filter of one value, or (the name) by the series' event. Other
 * filters then only choose the rows.
 */
function pinsEveryGroup(query: ChartSeriesQuery, rows: RollupRows): boolean {
  const breakdown = query.breakdowns[0] && columnOf(query.breakdowns[0]);
  const pinned = (column: FilterColumn) =>
    column === breakdown ||
    (column === "name" && query.event !== "*") ||
    query.filters.some(
      (filter) => columnOf(filter.field) === column && filter.operator === "is" && filter.values.length === 1,
    );
  return pinned("name") && rows.columns.every(pinned);
}

/**
 * The columns the day rows (event_pair_rollups) carry, alone or in pairs: `path` has none (its
 * values are many), so a distinct count by or filtered on a path is not in them.
 */
const DAY_ROW_COLUMNS: ReadonlySet<FilterColumn> = new Set<FilterColumn>(CHART_PAIR_COLUMNS);

/** Whether the day rows (event_pair_rollups) answer: for a pair of columns, or any distinct count. */
const readsDayRows = (query: ChartSeriesQuery, rows: RollupRows) =>
  rows.columns.length === 2 || isDistinctSegment(query.segment);

/**
 * Whether the rollups may answer a series: an additive segment (a property one on duration or
 * revenue), filters and a breakdown some rows answer (see rollupRows), and whole UTC hours at every
 * window and bucket edge, so each hour row lies inside one bucket. The rows of a pair are per local
 * day: for them chartRollupSource asks instead that every edge start a day of the zone they were
 * built in (a zone's day can start at a half hour). The `user` and `session` segments are read from
 * the day rows' distinct counts when each group is one row a day (pinsEveryGroup), every column is
 * one the day rows carry (DAY_ROW_COLUMNS) and, checked there too, each bucket one local day.
 */
export function chartRollupsCover(query: ChartSeriesQuery): boolean {
  if (!query.rollups) return false;
  const distinct = isDistinctSegment(query.segment);
  if (!distinct && !ADDITIVE_SEGMENTS.has(query.segment)) return false;
  if (isPropertySegment(query.segment) && rolledUpAmount(query) === undefined) return false;
  const rows = rollupRows(query);
  if (rows === undefined) return false;
  if (distinct)
    return pinsEveryGroup(query, rows) && rows.columns.every((column) => DAY_ROW_COLUMNS.has(column));
  // A pair's day rows ask instead that every edge start a local day (chartRollupSource).
  if (rows.columns.length === 2) return true;
  const periods = query.previous ? [query.current, query.previous] : [query.current];
  return periods.every(
    ({ window, buckets }) =>
      window.start % HOUR_MS === 0 &&
      window.end % HOUR_MS === 0 &&
      buckets.every((edge) => edge % HOUR_MS === 0),
  );
}

/** Every event whose ingest_xid is below this is in the rollups; 0 before their first build. */
export async function eventRollupsWatermark(db: Database): Promise<number> {
  const [row] = await db
    .select({ xid: derivedState.processedXid })
    .from(derivedState)
    .where(eq(derivedState.name, "event_rollups"));
  return Number(row?.xid ?? 0);
}

/**
 * The project's record of the zone its day rows or strings were built in, when that is the project's
 * zone now (joined to `projects`): after a timezone change they answer nothing until the next
 * refresh rebuilds them.
 */
export function builtInProjectZone(
  record: typeof eventPairTimezones | typeof eventBitTimezones,
  projectId: string,
): SQL | undefined {
  return and(
    eq(record.projectId, projectId),
    sql`${record.timezone} = coalesce(${projects.timezone}, 'UTC')`,
  );
}

/** The rows that answer a covered series, and for the day rows the zone of their days. */
export interface ChartRollupSource {
  rows: RollupRows;
  timeZone?: string;
}

/**
 * The rows that answer the series (chartRollupsCover), or undefined for the exact path. The day rows
 * are per local day of the zone recorded for the project: they answer only when every window and
 * bucket edge starts such a day (for a distinct count, when every bucket is one such day), not
 * before their first build recorded it, and not while the recorded zone is another than the
 * project's (after a timezone change until the next refresh rebuilds them, or a repair's '').
 */
export async function chartRollupSource(
  db: Database,
  query: ChartSeriesQuery,
): Promise<ChartRollupSource | undefined> {
  const rows = rollupRows(query);
  if (!chartRollupsCover(query) || rows === undefined) return undefined;
  if (!readsDayRows(query, rows)) return { rows };
  const [zone] = await db
    .select({ timeZone: eventPairTimezones.timezone })
    .from(eventPairTimezones)
    .leftJoin(projects, eq(projects.id, eventPairTimezones.projectId))
    .where(builtInProjectZone(eventPairTimezones, query.projectId));
  if (!zone) return undefined;
  const { timeZone } = zone;
  const periods = query.previous ? [query.current, query.previous] : [query.current];
  // A distinct count adds up only over the rows of one day: each bucket must be one.
  const day = (ms: number) => localDayNumber(ms, timeZone);
  const daily = periods.every(
    ({ window, buckets }) =>
      buckets[0] === window.start &&
      buckets.every((edge, i) => day(buckets[i + 1] ?? window.end) - day(edge) === 1),
  );
  return edgesStartLocalDays(query, timeZone) && (daily || !isDistinctSegment(query.segment))
    ? { rows, timeZone }
    : undefined;
}

/**
 * Whether every window and bucket edge of both periods starts a local day of `timeZone`, so that
 * each day of rows built in that zone lies inside one bucket.
 */
export function edgesStartLocalDays(query: ChartSeriesQuery, timeZone: string): boolean {
  const startsDay = (ms: number) => localDayNumber(ms, timeZone) !== localDayNumber(ms - 1, timeZone);
  const periods = query.previous ? [query.current, query.previous] : [query.current];
  return periods.every(
    ({ window, buckets }) => startsDay(window.start) && startsDay(window.end) && buckets.every(startsDay),
  );
}

/** The value of one bucket from the summed units, as exact numeric like the exact path's. */
function rolledUpValue(segment: ChartSegment): SQL {
  switch (segment) {
    case "property_sum":
      return sql`sum(amount_sum)::numeric`;
    case "property_average":
      return sql`round(sum(amount_sum)::numeric / sum(events), 2)`;
    case "property_min":
      return sql`min(amount_min)::numeric`;
    case "property_max":
      return sql`max(amount_max)::numeric`;
    default:
      return sql`sum(events)::numeric`;
  }
}

/** The aggregate columns both rollup tables have. */
type AmountColumns = Record<
  "durationSum" | "durationMin" | "durationMax" | "revenueSum" | "revenueMin" | "revenueMax",
  PgColumn
>;

function rowAmounts(table: AmountColumns, amount: RolledUpAmount) {
  return amount === "duration"
    ? { sum: table.durationSum, min: table.durationMin, max: table.durationMax }
    : { sum: table.revenueSum, min: table.revenueMin, max: table.revenueMax };
}

/** The field's column; only called for fields rollupRows accepted. */
const columnOf = (field: FilterField): FilterColumn => rolledUpColumn(field) ?? "name";

/**
 * The rows of the scanned range that answer the series, as units: the day rows (bucketed by their
 * earliest event) of a pair of columns, of one column ('' by_dimension) or of the event names
 * alone ('' both), counting events or a distinct segment's members; or the hour rows of one
 * column ('' dimension: the event names alone). The filters apply to the values of each row, and
 * the breakdown's value is `b0`.
 */
function rowUnits(db: Database, query: ChartSeriesQuery, { rows, timeZone }: ChartRollupSource) {
  const [breakdown] = query.breakdowns;
  const [first, second] = rows.columns;
  const amount = rolledUpAmount(query) ?? "duration";
  const filtersOn = (rowValue: (field: FilterField) => PgColumn) =>
    query.filters.map((filter) => dimensionValueCondition(filter, rowValue(filter.field)));
  // A row as a unit: its instant, the breakdown's value, its count and amounts.
  const unitsOf = (
    start: PgColumn,
    rowValue: (field: FilterField) => PgColumn,
    table: AmountColumns,
    count: PgColumn,
  ) =>
    unitColumns(
      start,
      breakdown ? rowValue(breakdown) : sql<string | null>`null::text`,
      count,
      rowAmounts(table, amount),
    );
  if (timeZone !== undefined) {
    const pairs = eventPairRollups;
    const counted = { user: pairs.profiles, session: pairs.sessions };
    const count = isDistinctSegment(query.segment) ? counted[query.segment] : pairs.events;
    const rowValue = (field: FilterField) => {
      const column = columnOf(field);
      if (column === "name") return pairs.name;
      return column === second ? pairs.byValue : pairs.value;
    };
    return db
      .select(unitsOf(pairs.firstAt, rowValue, pairs, count))
      .from(pairs)
      .where(
        and(
          eq(pairs.projectId, query.projectId),
          eq(pairs.dimension, first ?? ""),
          eq(pairs.byDimension, second ?? ""),
          query.event === "*" ? undefined : eq(pairs.name, query.event),
          // Every edge starts a local day (chartRollupSource), so a day lies inside the range or outside it.
          gte(pairs.day, dayNumberDate(localDayNumber(scanStart(query), timeZone))),
          lt(pairs.day, dayNumberDate(localDayNumber(query.current.window.end, timeZone))),
          ...filtersOn(rowValue),
        ),
      );
  }
  const hours = eventRollups;
  const rowValue = (field: FilterField) => (columnOf(field) === "name" ? hours.name : hours.value);
  return db
    .select(unitsOf(hours.hour, rowValue, hours, hours.events))
    .from(hours)
    .where(
      and(
        seriesRange(query, hours.hour, hours.projectId, hours.name),
        eq(hours.dimension, first ?? ""),
        ...filtersOn(rowValue),
      ),
    );
}

/**
 * The rollup path's bucket values: the rows of the scanned range that answer the series
 * (rowUnits) and the events the rollups do not hold yet (for a distinct count, the members those
 * add), each reduced to the same unit columns, then bucketed and aggregated like the exact path's
 * events.
 */
export async function rolledUpBucketValues(
  db: Database,
  query: ChartSeriesQuery,
  source: ChartRollupSource,
): Promise<BucketValues> {
  const watermark = await eventRollupsWatermark(db);
  const [breakdown] = query.breakdowns;
  const byDuration = (rolledUpAmount(query) ?? "duration") === "duration";
  // Each new event is a unit of one.
  const amountColumn = sql`${byDuration ? events.duration : events.revenue}::bigint`;
  const newEvents = db
    .select(unitColumns(events.createdAt, breakdownValue(breakdown), sql`1`, sameAmounts(amountColumn)))
    .from(events)
    .where(newSeriesEvents(query, watermark));
  // A distinct count's new members: only those its rows do not count yet (new-members.ts).
  const { segment } = query;
  const newUnits =
    isDistinctSegment(segment) && source.timeZone !== undefined
      ? newMemberUnits(db, { ...query, segment }, source.rows.columns, source.timeZone, watermark)
      : newEvents;
  return bucketedUnits(db, query, rowUnits(db, query, source).unionAll(newUnits).as("units"));
}

/** The units a rolled-up answer sums (rows and the events not folded in yet), as unitColumns. */
export type ChartUnits = SubqueryWithSelection<ReturnType<typeof unitColumns>, "units">;

/**
 * The bucket values of units: each lands in its period and bucket by its instant, with the
 * breakdown's value as `b0`, and the segment's value is aggregated from their counts and amounts
 * like the exact path's from the events.
 */
export function bucketedUnits(db: Database, query: ChartSeriesQuery, units: ChartUnits): BucketValues {
  const bucketed = db
    .select({
      ...unitBucketKeys(query, units.unit, units.b0),
      events: units.events,
      amountSum: units.amountSum,
      amountMin: units.amountMin,
      amountMax: units.amountMax,
    })
    .from(units)
    .as("bucketed");
  return bucketValues(db, bucketed, rolledUpValue(query.segment));
}
