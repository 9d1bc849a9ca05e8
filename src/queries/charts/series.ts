import { and, isNotNull, lte, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type EventBitsSource, eventBitsBucketValues, eventBitsSource } from "./event-bits";
import { eventMemberBucketValues } from "./event-members";
import { exactBucketValues } from "./exact";
import type { BucketValues, ChartGroup, ChartSeriesQuery, ChartSeriesResult } from "./model";
import { isDistinctSegment } from "./new-members";
import { chartRollupSource, rolledUpBucketValues } from "./rollups";

/**
 * Chart series for `/export/charts` (contract section 7): one query per requested series computes
 * the value of every (breakdown group, bucket) of the current period, and of the previous period
 * when asked, ranks the groups by their current total and returns only the top `limit` (plus one
 * row's worth of evidence that more existed). The values come from the event rollups when they
 * cover the series (rollups.ts), or from the bit strings over each day's events for filters on more
 * columns than the rollups pair (event-bits.ts, event-members.ts), else from the events (exact.ts). Zero-filling happens here; the
 * summaries (summaries.ts) use exact decimal arithmetic, so they agree with what SQL would compute.
 */

/** A series the event strings cover: events from their bit counts, visitors and sessions from their members. */
async function stringBucketValues(
  db: Database,
  query: ChartSeriesQuery,
  source: EventBitsSource,
): Promise<BucketValues> {
  const { segment } = query;
  return isDistinctSegment(segment)
    ? eventMemberBucketValues(db, { ...query, segment }, source)
    : eventBitsBucketValues(db, query, source);
}

/**
 * The ranked groups of one series, both periods, in one round trip (two on the rollup path: the
 * watermark first, and three for the day rows, whose zone is read before that; two from the
 * strings, whose zone and watermark are read first, and three for the distinct members of a long
 * window, whose parts are counted at once first).
 */
export async function chartSeries(db: Database, query: ChartSeriesQuery): Promise<ChartSeriesResult> {
  const { current, previous } = query;
  const source = await chartRollupSource(db, query);
  const strings = source ? undefined : await eventBitsSource(db, query);
  const perBucket = source
    ? await rolledUpBucketValues(db, query, source)
    : strings
      ? await stringBucketValues(db, query, strings)
      : exactBucketValues(db, query);

  // A group's current total is the sum of its bucket values: the same number as its `metrics.sum`,
  // so the cut at `limit` and the response's order agree. Groups seen only in the previous period
  // have no current total and are not series.
  const totals = db
    .select({
      period: perBucket.period,
      bucket: perBucket.bucket,
      b0: perBucket.b0,
      b1: perBucket.b1,
      b2: perBucket.b2,
      value: perBucket.value,
      currentTotal: sql<string | null>`sum(${perBucket.value}) filter (where ${perBucket.period} = 0)
        over (partition by ${perBucket.b0}, ${perBucket.b1}, ${perBucket.b2})`.as("current_total"),
    })
    .from(perBucket)
    .as("totals");

  const ranked = db
    .select({
      period: totals.period,
      bucket: totals.bucket,
      b0: totals.b0,
      b1: totals.b1,
      b2: totals.b2,
      value: totals.value,
      currentTotal: totals.currentTotal,
      groupRank: sql<number>`(dense_rank() over (order by ${totals.currentTotal} desc nulls last,
        ${totals.b0} collate "C" asc nulls last, ${totals.b1} collate "C" asc nulls last,
        ${totals.b2} collate "C" asc nulls last))::int`.as("group_rank"),
    })
    .from(totals)
    .as("ranked");

  // Rank `limit + 1` only says that more groups existed; its rows are dropped below.
  const rows = await db
    .select({
      period: ranked.period,
      bucket: ranked.bucket,
      b0: ranked.b0,
      b1: ranked.b1,
      b2: ranked.b2,
      value: sql<string>`${ranked.value}::text`,
      groupRank: ranked.groupRank,
    })
    .from(ranked)
    .where(
      and(
        // Without breakdowns the one group is the series itself, even with only previous-period rows.
        query.breakdowns.length > 0 ? isNotNull(ranked.currentTotal) : undefined,
        lte(ranked.groupRank, query.limit + 1),
      ),
    );

  const width = query.breakdowns.length;
  const zeros = (count: number) => Array.from({ length: count }, () => "0");
  const byRank = new Map<number, ChartGroup>();
  let truncated = false;
  for (const row of rows) {
    const rank = Number(row.groupRank);
    if (rank > query.limit) {
      truncated = true;
      continue;
    }
    let group = byRank.get(rank);
    if (!group) {
      group = {
        breakdowns: [row.b0, row.b1, row.b2].slice(0, width),
        current: zeros(current.buckets.length),
        ...(previous ? { previous: zeros(previous.buckets.length) } : {}),
      };
      byRank.set(rank, group);
    }
    const values = Number(row.period) === 0 ? group.current : group.previous;
    const index = Number(row.bucket) - 1;
    if (values && index >= 0 && index < values.length) values[index] = row.value;
  }
  const groups = [...byRank.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
  // Without breakdowns a series always exists, zero-filled when nothing matched.
  if (width === 0 && groups.length === 0) {
    groups.push({
      breakdowns: [],
      current: zeros(current.buckets.length),
      ...(previous ? { previous: zeros(previous.buckets.length) } : {}),
    });
  }
  return { groups, truncated };
}
