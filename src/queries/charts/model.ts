import { type SQL, sql } from "drizzle-orm";
import type { PgColumn, SubqueryWithSelection } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { events } from "../../db/schema";
import type { Filter, FilterField } from "../../lib/filter-parser";
import { eventColumn } from "../columns";
import { timestampArray } from "../sql-helpers";

/** Shapes shared by the two paths of the chart queries: exact (exact.ts) and rolled up (rollups.ts). */

export const CHART_SEGMENTS = [
  "event",
  "user",
  "session",
  "user_average",
  "one_event_per_user",
  "property_sum",
  "property_average",
  "property_min",
  "property_max",
] as const;

export type ChartSegment = (typeof CHART_SEGMENTS)[number];

export type PropertySegment = Extract<ChartSegment, `property_${string}`>;

export const isPropertySegment = (segment: ChartSegment): segment is PropertySegment =>
  segment.startsWith("property_");

/** At most this many breakdowns per chart (contract section 7). */
export const MAX_CHART_BREAKDOWNS = 3;

/** A half-open window of epoch milliseconds and its bucket start instants. */
export interface ChartPeriod {
  window: { start: number; end: number };
  buckets: number[];
}

export interface ChartSeriesQuery {
  projectId: string;
  /** An event name, or `*` for every event. */
  event: string;
  segment: ChartSegment;
  /** The numeric field a property segment aggregates (`duration`, `revenue` or `properties.<key>`). */
  property?: FilterField;
  /** The chart's filters and the series' own, ANDed; session attributes read the event's own columns. */
  filters: Filter[];
  /** Up to three fields whose values split the series. */
  breakdowns: FilterField[];
  /** Breakdown groups kept, largest current total first. */
  limit: number;
  current: ChartPeriod;
  previous?: ChartPeriod;
  /** Whether the event rollups may answer (the ROLLUPS switch); they do only when they cover the series. */
  rollups: boolean;
}

export interface ChartGroup {
  /** One value per breakdown, in the order asked; null where not set (null or empty). */
  breakdowns: Array<string | null>;
  /** Decimal text per bucket of the current period, zero-filled. */
  current: string[];
  /** Decimal text per bucket of the previous period, zero-filled; present when it was asked for. */
  previous?: string[];
}

export interface ChartSeriesResult {
  /** Ranked: current total desc, then breakdown values (byte order, not set last). */
  groups: ChartGroup[];
  /** More groups existed than `limit`. */
  truncated: boolean;
}

/** A bound timestamptz, never a Date for the driver to render in its own zone. */
export const instant = (ms: number) => sql`${new Date(ms).toISOString()}::timestamptz`;

/** The first instant either period covers: previous and current windows are adjacent. */
export const scanStart = (query: ChartSeriesQuery): number => (query.previous ?? query.current).window.start;

/**
 * The period (0 current, 1 previous) and the 1-based bucket of an instant inside the scanned
 * range; each period buckets against its own edges.
 */
export function periodAndBucket(
  time: SQL | SQL.Aliased | PgColumn,
  query: ChartSeriesQuery,
): { period: SQL<number>; bucket: SQL<number> } {
  const { current, previous } = query;
  if (!previous) {
    return {
      period: sql<number>`0`,
      bucket: sql<number>`width_bucket(${time}, ${timestampArray(current.buckets)})`,
    };
  }
  const isCurrent = sql`${time} >= ${instant(current.window.start)}`;
  return {
    period: sql<number>`(case when ${isCurrent} then 0 else 1 end)`,
    bucket: sql<number>`(case when ${isCurrent}
        then width_bucket(${time}, ${timestampArray(current.buckets)})
        else width_bucket(${time}, ${timestampArray(previous.buckets)}) end)`,
  };
}

/**
 * The keys of a unit with one breakdown value at most (the rollup and string paths): its period and
 * bucket by its instant, the value as `b0`, and no `b1` or `b2`.
 */
export function unitBucketKeys(
  query: ChartSeriesQuery,
  unit: SQL | SQL.Aliased | PgColumn,
  b0: SQL | SQL.Aliased,
) {
  const { period, bucket } = periodAndBucket(unit, query);
  return {
    period: period.as("period"),
    bucket: bucket.as("bucket"),
    b0: sql<string | null>`${b0}`.as("b0"),
    b1: sql<string | null>`null::text`.as("b1"),
    b2: sql<string | null>`null::text`.as("b2"),
  };
}

/** The field's value as text; a property key path is one bound text[] parameter. */
export function fieldText(field: FilterField): SQL {
  if (field.kind === "property") {
    return sql`(${events.properties} #>> ${sql.param(field.path)}::text[])`;
  }
  return sql`(${eventColumn(field.column)})::text`;
}

/** An event's breakdown value: empty strings count as not set, like NULL (as on the insights breakdowns). */
export function breakdownValue(field: FilterField | undefined): SQL<string | null> {
  return field ? sql<string | null>`nullif(${fieldText(field)}, '')` : sql<string | null>`null::text`;
}

/** The key columns every bucket-value source has: period, bucket and up to three breakdown values. */
export type BucketKeys = {
  period: SQL.Aliased<number>;
  bucket: SQL.Aliased<number>;
  b0: SQL.Aliased<string | null>;
  b1: SQL.Aliased<string | null>;
  b2: SQL.Aliased<string | null>;
};

/** The value of every (period, bucket, breakdown group): what both paths hand to the ranking. */
export type BucketValues = SubqueryWithSelection<BucketKeys & { value: SQL.Aliased<unknown> }, "per_bucket">;

/** Groups a source by period, bucket and breakdown values, with `value` its aggregate per group. */
export function bucketValues(
  db: Database,
  source: SubqueryWithSelection<BucketKeys, string>,
  value: SQL,
): BucketValues {
  return db
    .select({
      period: source.period,
      bucket: source.bucket,
      b0: source.b0,
      b1: source.b1,
      b2: source.b2,
      value: value.as("value"),
    })
    .from(source)
    .groupBy(source.period, source.bucket, source.b0, source.b1, source.b2)
    .as("per_bucket");
}
