import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessions } from "../../db/schema";
import { timestampArray } from "../sql-helpers";
import {
  type MetricsAnswer,
  rollupsCover,
  type SessionScope,
  spreadOverBuckets,
  toBucketMetrics,
} from "./model";
import { rolledUpSessionMetrics } from "./rollups";
import { metricColumns, sessionsInScope } from "./session-scope";

/**
 * The metrics of the whole window and of each bucket, in one pass: GROUPING SETS gives the
 * per-bucket rows and the total row (whose distinct visitor count is not a sum of buckets).
 * `buckets` are bucket start instants; every bucket is returned, zero-filled.
 */
export function sessionMetrics(db: Database, scope: SessionScope, buckets: number[]): Promise<MetricsAnswer> {
  return rollupsCover(scope, buckets)
    ? rolledUpSessionMetrics(db, scope, buckets)
    : exactSessionMetrics(db, scope, buckets);
}

async function exactSessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<MetricsAnswer> {
  // The bucket is computed once in a subquery: repeated in SELECT and GROUP BY it would carry
  // separately bound parameters, which Postgres does not recognise as the same expression.
  const scoped = db
    .select({
      bucket: sql<number>`width_bucket(${sessions.startedAt}, ${timestampArray(buckets)})`.as("bucket"),
      profileId: sessions.profileId,
      isBounce: sessions.isBounce,
      durationMs: sessions.durationMs,
      screenViewCount: sessions.screenViewCount,
      revenue: sessions.revenue,
    })
    .from(sessions)
    .where(sessionsInScope(scope))
    .as("scoped");
  const rows = await db
    .select({
      bucket: scoped.bucket,
      isTotal: sql<number>`grouping(${scoped.bucket})`,
      ...metricColumns(scoped),
    })
    .from(scoped)
    .groupBy(sql`grouping sets ((${scoped.bucket}), ())`);

  return { ...spreadOverBuckets(rows.map(toBucketMetrics), buckets.length), approximate: [] };
}
