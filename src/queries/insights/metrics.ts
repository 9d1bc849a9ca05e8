import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  bitStringFilters,
  type MetricsAnswer,
  metricsRollupsCover,
  type SessionScope,
  spreadOverBuckets,
  toBucketMetrics,
} from "./model";
import { rolledUpSessionMetrics } from "./rollups";
import { combinedFilterMetrics } from "./session-bits";
import { bitStringsCover } from "./session-masks";
import { metricColumns, sessionsByBucket } from "./session-scope";

/**
 * The metrics of the whole window and of each bucket, in one pass: GROUPING SETS gives the
 * per-bucket rows and the total row (whose distinct visitor count is not a sum of buckets).
 * `buckets` are bucket start instants; every bucket is returned, zero-filled.
 */
export async function sessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<MetricsAnswer> {
  if (metricsRollupsCover(scope, buckets)) return rolledUpSessionMetrics(db, scope, buckets);
  const combined = bitStringFilters(scope);
  if (combined && (await bitStringsCover(db, scope, buckets, SUMS_AND_VISITORS)))
    return combinedFilterMetrics(db, scope, combined, buckets);
  return exactSessionMetrics(db, scope, buckets);
}

/** From the strings, the sums and the visitors are read side by side (combinedFilterMetrics). */
const SUMS_AND_VISITORS = 2;

async function exactSessionMetrics(
  db: Database,
  scope: SessionScope,
  buckets: number[],
): Promise<MetricsAnswer> {
  const scoped = sessionsByBucket(db, scope, buckets);
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
