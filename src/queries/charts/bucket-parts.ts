import { type SQL, sql } from "drizzle-orm";
import { bucketStarts } from "../../lib/buckets";
import { dealtInTurn, partsForDays } from "../statement-parts";
import type { ChartSeriesQuery } from "./model";

/**
 * A chart's buckets of both periods, dealt out to statements read at once (statement-parts.ts).
 * A distinct count per bucket needs all of the bucket's members in one statement, so a part holds
 * whole buckets, never a bucket's days apart; the buckets are dealt in turn, as the insights deal
 * days, so each part holds as many early and late ones.
 */

/** One bucket of one period (0 current, 1 previous), 1-based as periodAndBucket numbers it, and its days' local midnights. */
export interface ChartBucket {
  period: number;
  bucket: number;
  days: number[];
}

/** Some whole buckets of a chart, and the days they cover. */
export interface BucketPart {
  buckets: ChartBucket[];
  days: number[];
}

/** Every bucket of both periods, each clipped to its period's window, with its days in `timeZone`. */
export function chartBuckets(query: ChartSeriesQuery, timeZone: string): ChartBucket[] {
  const periods = query.previous ? [query.current, query.previous] : [query.current];
  return periods.flatMap(({ window, buckets }, period) =>
    buckets.map((start, index) => ({
      period,
      bucket: index + 1,
      days: bucketStarts(
        { start: Math.max(start, window.start), end: Math.min(buckets[index + 1] ?? window.end, window.end) },
        "day",
        timeZone,
      ),
    })),
  );
}

/**
 * The chart's buckets in parts for a window of their days (partsForDays), no more parts than
 * buckets; one part (undefined) when the window is short or is one bucket, read by one statement.
 */
export function bucketParts(query: ChartSeriesQuery, timeZone: string): BucketPart[] | undefined {
  const buckets = chartBuckets(query, timeZone);
  const days = buckets.reduce((sum, bucket) => sum + bucket.days.length, 0);
  const parts = Math.min(partsForDays(days), buckets.length);
  if (parts <= 1) return undefined;
  return dealtInTurn(buckets, parts).map((dealt) => ({
    buckets: dealt,
    days: dealt.flatMap((bucket) => bucket.days),
  }));
}

/** Whether an instant's keys (periodAndBucket) are those of one of the part's buckets. */
export function inBucketPart(keys: { period: SQL; bucket: SQL }, part: BucketPart): SQL {
  const pairs = part.buckets.map(({ period, bucket }) => sql`(${period}::int, ${bucket}::int)`);
  return sql`(${keys.period}, ${keys.bucket}) in (${sql.join(pairs, sql`, `)})`;
}
