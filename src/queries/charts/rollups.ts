import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { derivedState, eventPairRollups, eventRollups, events } from "../../db/schema";
import { CHART_PAIR_COLUMNS, CHART_ROLLUP_COLUMNS } from "../../lib/dimensions";
import type { FilterColumn, FilterField } from "../../lib/filter-parser";
import { HOUR_MS } from "../../lib/timezone";
import { dimensionValueCondition, eventConditions } from "../filter-conditions";
import {
  type BucketValues,
  breakdownValue,
  bucketValues,
  type ChartSegment,
  type ChartSeriesQuery,
  isPropertySegment,
  periodAndBucket,
  scanStart,
} from "./model";

/**
 * The rollup path of the chart queries: the same numbers as the exact path (exact.ts), read from
 * the hourly event rollups that `refresh_derived()` maintains (src/db/routines/
 * refresh_event_rollups.sql: rows per value of one column, and per pair of values of two) plus the events that arrived since its last run, which it has not
 * folded in yet. The rollups hold exactly the events below the watermark, so the sum is exact at
 * any moment.
 */

/** The columns the event rollups carry a row per value of; `name` is part of every row. */
const ROLLED_UP_COLUMNS: ReadonlySet<FilterColumn> = new Set<FilterColumn>(["name", ...CHART_ROLLUP_COLUMNS]);

/** The columns with pair rows, in the order the pairs are stored (the earlier one first). */
const PAIR_COLUMNS: readonly FilterColumn[] = CHART_PAIR_COLUMNS;

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
  const pair = PAIR_COLUMNS.filter((column) => columns.has(column));
  return pair.length === 2 ? { columns: pair } : undefined;
}

/**
 * Whether the rollups answer a series: an additive segment (a property one on duration or
 * revenue), filters and a breakdown some rows answer (see rollupRows), and whole UTC hours at every
 * window and bucket edge, so each hour row lies inside one bucket.
 */
export function chartRollupsCover(query: ChartSeriesQuery): boolean {
  if (!query.rollups || !ADDITIVE_SEGMENTS.has(query.segment)) return false;
  if (isPropertySegment(query.segment) && rolledUpAmount(query) === undefined) return false;
  if (rollupRows(query) === undefined) return false;
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

type Operand = SQL | PgColumn;

/** The series' project, event name and scanned range (both periods), on either table. */
function seriesRange(query: ChartSeriesQuery, time: PgColumn, projectId: PgColumn, name: PgColumn) {
  return and(
    eq(projectId, query.projectId),
    gte(time, new Date(scanStart(query))),
    lt(time, new Date(query.current.window.end)),
    query.event === "*" ? undefined : eq(name, query.event),
  );
}

/** The columns both kinds of unit share: its start, breakdown value, event count and amount aggregates. */
function unitColumns(
  start: Operand,
  value: Operand,
  count: Operand,
  amount: { sum: Operand; min: Operand; max: Operand },
) {
  return {
    unit: sql<Date>`${start}`.as("unit"),
    b0: sql<string | null>`${value}`.as("b0"),
    events: sql<number>`${count}`.as("events"),
    amountSum: sql<string>`${amount.sum}`.as("amount_sum"),
    amountMin: sql<string>`${amount.min}`.as("amount_min"),
    amountMax: sql<string>`${amount.max}`.as("amount_max"),
  };
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
 * The hour rows of the scanned range that answer the series, as units: those of one pair of
 * columns, or of one column ('' dimension: the event names alone), with the filters applied to
 * the values of each row and the breakdown's value as `b0`.
 */
function hourRows(db: Database, query: ChartSeriesQuery, rows: RollupRows) {
  const [breakdown] = query.breakdowns;
  const [first, second] = rows.columns;
  const table = second === undefined ? eventRollups : eventPairRollups;
  const rowValue = (field: FilterField) => {
    const column = columnOf(field);
    if (column === "name") return table.name;
    return column === second ? eventPairRollups.byValue : table.value;
  };
  return db
    .select(
      unitColumns(
        table.hour,
        breakdown ? rowValue(breakdown) : sql<string | null>`null::text`,
        table.events,
        rowAmounts(table, rolledUpAmount(query) ?? "duration"),
      ),
    )
    .from(table)
    .where(
      and(
        seriesRange(query, table.hour, table.projectId, table.name),
        eq(table.dimension, first ?? ""),
        second === undefined ? undefined : eq(eventPairRollups.byDimension, second),
        ...query.filters.map((filter) => dimensionValueCondition(filter, rowValue(filter.field))),
      ),
    );
}

/**
 * The rollup path's bucket values: the hour rows of the scanned range that answer the series
 * (hourRows) and the events the rollups do not hold yet, each reduced to the same unit columns,
 * then bucketed and aggregated like the exact path's events.
 */
export async function rolledUpBucketValues(db: Database, query: ChartSeriesQuery): Promise<BucketValues> {
  const rows = rollupRows(query);
  if (rows === undefined) throw new Error("rolledUpBucketValues: no rollup rows answer this series");
  const watermark = await eventRollupsWatermark(db);
  const [breakdown] = query.breakdowns;
  const byDuration = (rolledUpAmount(query) ?? "duration") === "duration";
  // Each new event is a unit of one. The watermark is a literal, not a subquery: the planner then
  // sees how few events lie above it and reaches them through the ingest_xid index instead of
  // the whole window.
  const amountColumn = sql`${byDuration ? events.duration : events.revenue}::bigint`;
  const newEvents = db
    .select(
      unitColumns(events.createdAt, breakdownValue(breakdown), sql`1`, {
        sum: amountColumn,
        min: amountColumn,
        max: amountColumn,
      }),
    )
    .from(events)
    .where(
      and(
        seriesRange(query, events.createdAt, events.projectId, events.name),
        gte(events.ingestXid, watermark),
        eventConditions(query.filters),
      ),
    );
  const units = hourRows(db, query, rows).unionAll(newEvents).as("units");

  const { period, bucket } = periodAndBucket(units.unit, query);
  const bucketed = db
    .select({
      period: period.as("period"),
      bucket: bucket.as("bucket"),
      b0: sql<string | null>`${units.b0}`.as("b0"),
      b1: sql<string | null>`null::text`.as("b1"),
      b2: sql<string | null>`null::text`.as("b2"),
      events: units.events,
      amountSum: units.amountSum,
      amountMin: units.amountMin,
      amountMax: units.amountMax,
    })
    .from(units)
    .as("bucketed");
  return bucketValues(db, bucketed, rolledUpValue(query.segment));
}
