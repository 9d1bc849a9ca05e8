import { and, desc, eq, gte, isNotNull, lt, lte, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../db/client";
import { events } from "../db/schema";
import type { FilterField } from "../lib/filters";
import {
  type BucketValues,
  breakdownValue,
  bucketValues,
  type ChartGroup,
  type ChartSegment,
  type ChartSeriesQuery,
  type ChartSeriesResult,
  eventColumn,
  fieldText,
  isPropertySegment,
  periodAndBucket,
  scanStart,
} from "./charts-model";
import { chartRollupsCover, rolledUpBucketValues } from "./charts-rollups";
import { eventConditions } from "./filters";

/**
 * Chart series for `/export/charts` (contract section 7): one query per requested series computes
 * the value of every (breakdown group, bucket) of the current period, and of the previous period
 * when asked, ranks the groups by their current total and returns only the top `limit` (plus one
 * row's worth of evidence that more existed). The values come from the event rollups when they
 * cover the series (charts-rollups.ts), else from the events. Zero-filling and the summaries
 * happen in TypeScript with exact decimal arithmetic, so they agree with what SQL would compute.
 */

// Numeric text as the filter compiler accepts it (src/queries/filters.ts): at most 100 characters
// with a 3-digit exponent, so the guarded `::numeric` cast can never fail on stored data.
const NUMERIC_TEXT_SQL = sql.raw(
  `'^(?=.{1,100}$)[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]{1,3})?$'`,
);

/** The field as a number, or NULL when it is missing or not numeric (such rows are skipped). */
function fieldAmount(field: FilterField): SQL {
  if (field.kind === "column") return sql`(${eventColumn(field.column)})::numeric`;
  const text = fieldText(field);
  return sql`(case when ${text} ~ ${NUMERIC_TEXT_SQL} then (${text})::numeric end)`;
}

interface ValueColumns {
  profileId: SQL.Aliased | PgColumn;
  sessionId: SQL.Aliased | PgColumn;
  amount: SQL.Aliased;
}

/** The value of one bucket, as exact numeric (averages rounded half away from zero to 2 decimals). */
function segmentValue(segment: ChartSegment, source: ValueColumns): SQL {
  switch (segment) {
    case "event":
      return sql`count(*)::numeric`;
    case "user":
      return sql`count(distinct ${source.profileId})::numeric`;
    case "session":
      return sql`count(distinct ${source.sessionId})::numeric`;
    case "user_average":
      // Every bucket that has a row has at least one visitor: the division is safe.
      return sql`round(count(*)::numeric / count(distinct ${source.profileId}), 2)`;
    case "one_event_per_user":
      // The source already holds one row per visitor and period.
      return sql`count(*)::numeric`;
    case "property_sum":
      return sql`sum(${source.amount})`;
    case "property_average":
      return sql`round(avg(${source.amount}), 2)`;
    case "property_min":
      return sql`min(${source.amount})`;
    case "property_max":
      return sql`max(${source.amount})`;
  }
}

/** The exact path: bucket values computed from the events of both periods in one range scan. */
function exactBucketValues(db: Database, query: ChartSeriesQuery): BucketValues {
  const property = isPropertySegment(query.segment) ? query.property : undefined;
  if (isPropertySegment(query.segment) && !property) throw new Error("property segment without property");
  const { period, bucket } = periodAndBucket(events.createdAt, query);
  const amount = property ? fieldAmount(property) : sql`null::numeric`;

  // Period, bucket and breakdown values are computed once here: repeated in GROUP BY or DISTINCT ON
  // they would carry separately bound parameters, which Postgres does not see as the same expression.
  const scoped = db
    .select({
      period: period.as("period"),
      bucket: bucket.as("bucket"),
      b0: breakdownValue(query.breakdowns[0]).as("b0"),
      b1: breakdownValue(query.breakdowns[1]).as("b1"),
      b2: breakdownValue(query.breakdowns[2]).as("b2"),
      profileId: events.profileId,
      sessionId: events.sessionId,
      createdAt: events.createdAt,
      id: events.id,
      amount: amount.as("amount"),
    })
    .from(events)
    .where(
      and(
        eq(events.projectId, query.projectId),
        gte(events.createdAt, new Date(scanStart(query))),
        lt(events.createdAt, new Date(query.current.window.end)),
        query.event === "*" ? undefined : eq(events.name, query.event),
        eventConditions(query.filters),
        // Property segments skip events whose value is missing or not numeric.
        property ? sql`${fieldAmount(property)} is not null` : undefined,
      ),
    )
    .as("scoped");

  // one_event_per_user: each visitor's latest matching event of the period (ties: the larger id),
  // which then lands in its bucket and breakdown group.
  const source =
    query.segment === "one_event_per_user"
      ? db
          .selectDistinctOn([scoped.period, scoped.profileId])
          .from(scoped)
          .orderBy(scoped.period, scoped.profileId, desc(scoped.createdAt), desc(scoped.id))
          .as("latest")
      : scoped;
  return bucketValues(db, source, segmentValue(query.segment, source));
}

/** The ranked groups of one series, both periods, in one round trip (two on the rollup path). */
export async function chartSeries(db: Database, query: ChartSeriesQuery): Promise<ChartSeriesResult> {
  const { current, previous } = query;
  const perBucket = chartRollupsCover(query)
    ? await rolledUpBucketValues(db, query)
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

/*
 * Exact decimal arithmetic on Postgres numeric text ("12", "-0.50"): sums, means and percent
 * changes of bucket values are computed without binary floating point, so a sum of 0.1 and 0.2 is
 * 0.3 and a mean of 1.005 rounds to 1.01, exactly as Postgres' numeric would.
 */

const DECIMAL_TEXT = /^([+-]?)(\d+)(?:\.(\d*))?$/;

interface Scaled {
  units: bigint;
  scale: number;
}

function parseDecimal(text: string): Scaled {
  const match = DECIMAL_TEXT.exec(text.trim());
  if (!match) throw new Error(`not a decimal: ${text}`);
  const [, sign, whole = "0", fraction = ""] = match;
  const units = BigInt(`${whole}${fraction}`);
  return { units: sign === "-" ? -units : units, scale: fraction.length };
}

const TEN = BigInt(10);
const ZERO = BigInt(0);
const pow10 = (exponent: number) => TEN ** BigInt(exponent);

function rescale(value: Scaled, scale: number): bigint {
  return value.units * pow10(scale - value.scale);
}

function formatScaled(units: bigint, scale: number): string {
  const negative = units < ZERO;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = scale > 0 ? `.${digits.slice(digits.length - scale)}` : "";
  return `${negative ? "-" : ""}${whole}${fraction}`;
}

/** `numerator / denominator` rounded half away from zero (Postgres' `round`); denominator > 0. */
function divideRounded(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < ZERO;
  const magnitude = negative ? -numerator : numerator;
  const rounded = (magnitude * BigInt(2) + denominator) / (denominator * BigInt(2));
  return negative ? -rounded : rounded;
}

/** The exact sum of decimal texts ("0" for none). */
export function decimalSum(values: readonly string[]): string {
  const parsed = values.map(parseDecimal);
  const scale = Math.max(0, ...parsed.map((value) => value.scale));
  return formatScaled(
    parsed.reduce((sum, value) => sum + rescale(value, scale), ZERO),
    scale,
  );
}

/** `total / count` rounded half away from zero to `decimals` places; "0" when count is 0. */
export function decimalMean(total: string, count: number, decimals: number): string {
  if (count <= 0) return "0";
  const value = parseDecimal(total);
  const numerator = value.units * pow10(decimals);
  return formatScaled(divideRounded(numerator, BigInt(count) * pow10(value.scale)), decimals);
}

export function compareDecimals(a: string, b: string): number {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const scale = Math.max(x.scale, y.scale);
  const difference = rescale(x, scale) - rescale(y, scale);
  return difference < ZERO ? -1 : difference > ZERO ? 1 : 0;
}

/**
 * The signed percent change from `previous` to `current`, rounded half away from zero to one
 * decimal; relative to |previous|, so a rise is positive even from a negative value. Null when
 * `previous` is 0 (no finite change).
 */
export function percentChange(current: string, previous: string): number | null {
  const x = parseDecimal(current);
  const y = parseDecimal(previous);
  const scale = Math.max(x.scale, y.scale);
  const before = rescale(y, scale);
  if (before === ZERO) return null;
  const difference = rescale(x, scale) - before;
  const tenths = divideRounded(difference * BigInt(1000), before < ZERO ? -before : before);
  // `+ 0` turns a rounded -0 into 0.
  return Number(formatScaled(tenths, 1)) + 0;
}
