import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { visitorDimensionSketches } from "../../db/schema";
import { dimensionValueCondition } from "../filter-conditions";
import { timestampArray, toNumber } from "../sql-helpers";
import { type DimensionFilter, dimensionFilter, type Numeric, type SessionScope } from "./model";
import { sessionsByBucket } from "./session-scope";
import { estimateVisitors } from "./visitor-sketch";
import { daysBuilt, wholeProjectDays, windowRows } from "./window-rows";

/**
 * Unique visitors on the rollup path: counted exactly from the sessions where that is cheap, else
 * merged from HyperLogLog sketches (within ±2 %, flagged approximate). Without a filter the
 * sketches are the hourly and daily ones (src/db/routines/refresh_visitor_sketches.sql); with a filter on one dimension, the sketches per day and value of that
 * dimension (refresh_dimension_sketches.sql), which exist for whole project days only.
 */

/**
 * Up to this many sessions in the window (whatever the filter), unique visitors are counted exactly
 * from `sessions` (a few milliseconds); above it they come from the sketches.
 */
export const EXACT_VISITORS_UP_TO = 20_000;

/** Distinct visitors per bucket (keys 1..n) and over the window (key 0). */
export type VisitorCounts = Map<number, number>;

/**
 * The key of a row of `group by grouping sets ((bucket, …), (…))`: its bucket, or 0 for the
 * grouping set without the bucket, which is the whole window (VisitorCounts' key 0).
 */
export const bucketOrWindow = sql`case when grouping(bucket) = 1 then 0 else bucket end`;

export interface WindowVisitors {
  counts: VisitorCounts;
  approximate: boolean;
}

/** Distinct visitors of the scope's sessions (its filters included), per bucket and in all. */
export async function exactVisitors(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<VisitorCounts> {
  const scoped = sessionsByBucket(db, scope, buckets);
  const rows = await db
    .select({
      bucket: scoped.bucket,
      isTotal: sql<number>`grouping(${scoped.bucket})`,
      visitors: sql<string>`count(distinct ${scoped.profileId})`,
    })
    .from(scoped)
    .groupBy(sql`grouping sets ((${scoped.bucket}), ())`);
  return new Map(
    rows.map((row) => [Number(row.isTotal) === 1 ? 0 : Number(row.bucket), toNumber(row.visitors)]),
  );
}

/** Estimates from the registers at or above each plane, per bucket (keys 1..n) and in all (key 0). */
function estimates(
  rows: ReadonlyArray<{ bucket: number; plane: number; registers: Numeric }>,
): VisitorCounts {
  const sketches = new Map<number, Map<number, number>>();
  for (const row of rows) {
    const key = Number(row.bucket);
    const sketch = sketches.get(key) ?? new Map<number, number>();
    sketch.set(Number(row.plane), toNumber(row.registers));
    sketches.set(key, sketch);
  }
  return new Map([...sketches].map(([key, sketch]) => [key, estimateVisitors(sketch)]));
}

/**
 * Estimates from sketch planes, each with its `unit` start, merged per bucket and over the window.
 * Planes merge with bit_or; bit_count of merged plane k = registers at or above k.
 */
async function mergedSketches(db: Database, planes: SQL, buckets: number[]): Promise<VisitorCounts> {
  const result = await db.execute<{ bucket: number; plane: number; registers: Numeric }>(sql`
    select ${bucketOrWindow} as bucket, plane,
      bit_count(bit_or(registers)) as registers
    from (
      select width_bucket(unit, ${timestampArray(buckets)}) as bucket, plane, registers
      from ${planes}
    ) as bucketed
    group by grouping sets ((bucket, plane), (plane))`);
  return estimates(result.rows);
}

/** Unique visitors (no filter) from the sketches of the window's days and hours. */
export function estimatedVisitors(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<VisitorCounts> {
  return mergedSketches(db, windowRows("visitors", scope, buckets), buckets);
}

/**
 * Unique visitors from the sketches per day and value of the filter's dimension, for the values it
 * keeps: per bucket and in all. A group is stored dense (planes 1…) or sparse (plane 0: its
 * register entries); the sparse entries of a bucket become planes once, here (entry_planes,
 * src/db/routines/entry_planes.sql), and merge with the dense ones by bit_or.
 */
function dimensionSketches(
  db: Database,
  scope: SessionScope,
  { dimension, filter }: DimensionFilter,
  buckets: number[],
): Promise<VisitorCounts> {
  const s = visitorDimensionSketches;
  return mergedSketches(
    db,
    sql`(
      with selected as (
        select ${s.day} as unit, ${s.plane} as plane, ${s.registers} as registers, ${s.entries} as entries
        from ${s}
        where ${and(
          eq(s.projectId, scope.projectId),
          eq(s.dimension, dimension),
          dimensionValueCondition(filter, s.name),
          gte(s.day, new Date(scope.window.start)),
          lt(s.day, new Date(scope.window.end)),
        )}
      )
      select unit, plane, registers from selected where plane > 0
      union all
      select sparse.unit, p.plane, p.registers
      from (
        select unit, array_agg(entry) as entries from selected, unnest(entries) as entry where plane = 0 group by unit
      ) as sparse
      cross join lateral entry_planes(sparse.entries) as p
    ) as units`,
    buckets,
  );
}

/**
 * Whether the sketches per value answer a filtered window: it is whole project days whose sketches
 * are built, holding more sessions (without filters: what an exact count would have to read) than
 * an exact count takes. Both asked in one statement, one round trip to the database.
 */
async function sketchesPerValueAnswer(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<boolean> {
  const whole = wholeProjectDays(scope, buckets);
  if (whole.start !== scope.window.start || whole.end !== scope.window.end) return false;
  const result = await db.execute<{ built: boolean; sessions: Numeric }>(sql`
    select ${daysBuilt(scope)} as built, (
      select coalesce(sum(sessions), 0)
      from ${windowRows("sessions", { ...scope, filters: [] }, buckets, sql`dimension = ''`)}
    ) as sessions`);
  const row = result.rows[0];
  return row?.built === true && toNumber(row.sessions) > EXACT_VISITORS_UP_TO;
}

/**
 * Unique visitors of the scope: exact while the window holds few sessions, else from the sketches.
 * With a filter, the sketches serve only windows of whole project days; other windows are counted
 * exactly, reading no more than the window's sessions.
 */
export async function windowVisitors(
  db: Database,
  scope: SessionScope,
  buckets: number[],
  scopeSessions: number,
): Promise<WindowVisitors> {
  const filter = dimensionFilter(scope);
  if (!filter) {
    if (scopeSessions <= EXACT_VISITORS_UP_TO)
      return { counts: await exactVisitors(db, scope, buckets), approximate: false };
    return { counts: await estimatedVisitors(db, scope, buckets), approximate: true };
  }
  if (!(await sketchesPerValueAnswer(db, scope, buckets)))
    return { counts: await exactVisitors(db, scope, buckets), approximate: false };
  return { counts: await dimensionSketches(db, scope, filter, buckets), approximate: true };
}
