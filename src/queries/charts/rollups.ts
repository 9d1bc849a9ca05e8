import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { derivedState, eventRollups, events } from "../../db/schema";
import { CHART_ROLLUP_COLUMNS } from "../../lib/dimensions";
import type { Filter, FilterColumn, FilterField } from "../../lib/filter-parser";
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
 * refresh_event_rollups.sql) plus the events that arrived since its last run, which it has not
 * folded in yet. The rollups hold exactly the events below the watermark, so the sum is exact at
 * any moment.
 */

/** The columns the event rollups carry a row per value of; `name` is part of every row. */
const ROLLED_UP_BREAKDOWNS: ReadonlySet<FilterColumn> = new Set<FilterColumn>([
  "name",
  ...CHART_ROLLUP_COLUMNS,
]);

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
  return field?.kind === "column" && ROLLED_UP_BREAKDOWNS.has(field.column) ? field.column : undefined;
}

/**
 * The series' one filter when the rollups can apply it: any operator but `regex` on a rolled-up
 * column, with no value that is "" (the rollups keep empty strings and NULL alike as not set, and
 * only those two tell them apart), and either no breakdown or one on the same column. It then
 * applies to the values of that dimension's rows.
 */
function rolledUpFilter(query: ChartSeriesQuery): { column: FilterColumn; filter: Filter } | undefined {
  const [filter, ...more] = query.filters;
  if (!filter || more.length > 0 || filter.operator === "regex") return undefined;
  const column = rolledUpColumn(filter.field);
  if (column === undefined || filter.values.some((value) => String(value) === "")) return undefined;
  const [breakdown, ...others] = query.breakdowns;
  if (others.length > 0 || (breakdown && rolledUpColumn(breakdown) !== column)) return undefined;
  return { column, filter };
}

/**
 * Whether the rollups answer a series: an additive segment (a property one on duration or
 * revenue), at most one breakdown on a rolled-up column, or one filter on one (see rolledUpFilter), and whole UTC
 * hours at every window and bucket edge, so each hour row lies inside one bucket.
 */
export function chartRollupsCover(query: ChartSeriesQuery): boolean {
  if (!query.rollups || !ADDITIVE_SEGMENTS.has(query.segment)) return false;
  if (isPropertySegment(query.segment) && rolledUpAmount(query) === undefined) return false;
  if (query.filters.length > 0 && rolledUpFilter(query) === undefined) return false;
  if (query.breakdowns.length > 1) return false;
  const [breakdown] = query.breakdowns;
  if (breakdown && rolledUpColumn(breakdown) === undefined) return false;
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

/**
 * The rollup path's bucket values: the hour rows of the scanned range (the `''` dimension for a
 * series without breakdown or split by name) and the events the rollups do not hold yet, each
 * reduced to the same unit columns, then bucketed and aggregated like the exact path's events.
 */
export async function rolledUpBucketValues(db: Database, query: ChartSeriesQuery): Promise<BucketValues> {
  const watermark = await eventRollupsWatermark(db);
  const [breakdown] = query.breakdowns;
  const filter = rolledUpFilter(query);
  // The dimension whose rows answer: the filtered or broken-down column ('' rows carry `name`).
  const column = filter?.column ?? rolledUpColumn(breakdown);
  const dimension = column === undefined || column === "name" ? "" : column;
  const rowValue = column === "name" ? eventRollups.name : eventRollups.value;
  const amount = rolledUpAmount(query) ?? "duration";
  const rollupValue = breakdown ? rowValue : sql<string | null>`null::text`;
  const byDuration = amount === "duration";
  const hourRows = db
    .select(
      unitColumns(eventRollups.hour, rollupValue, eventRollups.events, {
        sum: byDuration ? eventRollups.durationSum : eventRollups.revenueSum,
        min: byDuration ? eventRollups.durationMin : eventRollups.revenueMin,
        max: byDuration ? eventRollups.durationMax : eventRollups.revenueMax,
      }),
    )
    .from(eventRollups)
    .where(
      and(
        seriesRange(query, eventRollups.hour, eventRollups.projectId, eventRollups.name),
        eq(eventRollups.dimension, dimension),
        filter ? dimensionValueCondition(filter.filter, rowValue) : undefined,
      ),
    );
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
  const units = hourRows.unionAll(newEvents).as("units");

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
