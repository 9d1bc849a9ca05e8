import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessionDayBits, sessionDayRollups, sessionDaySlices } from "../../db/schema";
import type { BreakdownDimension } from "../../lib/dimensions";
import { textColumns } from "../statement-parts";
import { combinedVisitors } from "./combined-visitors";
import { type CountedRanking, type PartCount, rankedInParts, shownOnPage } from "./counted-in-parts";
import { partsWeight, rowsOfDayParts } from "./day-parts";
import type { BitStringFilter, DayPart, MetricsAnswer, Page, SessionScope } from "./model";
import { summedSessionMetrics, withVisitors } from "./rollups";
import { dayMasks, slicedSum, sliceWeight } from "./session-masks";

/**
 * Two or three filters at once, from the bit strings per project day over the day's sessions
 * (src/db/routines/refresh_session_bits.sql): per day and block of its sessions, the OR of the
 * strings of the values each filter keeps, ANDed over the filters, is the block's matching
 * sessions (its mask); `bit_count` counts them, and the bit slices of each measure sum them.
 * Exact, and read per block (one a day up to 524,288 sessions) rather than per session. The strings
 * cover whole project days, so the window must be made of them.
 */

/**
 * The sums of the sessions in `matched` (a bit string of block `block` of the day `day`, a column
 * so that it is computed once) as the rollups' columns: one AND and count per slice of the day, weighted by
 * 2^slice and summed per measure first (pivoted from the rows of a subquery, each FILTER would
 * compute its ANDs again). Revenue is its positive part less its refunds.
 */
function maskedSums(scope: SessionScope, day: SQL, block: SQL, matched: SQL): SQL {
  const s = sessionDaySlices;
  const sum = (measure: string) => sql`coalesce(sum(weight) filter (where measure = ${measure}), 0)`;
  return sql`(
    select ${sum("bounce")} as bounces, ${sum("screen_views")} as screen_views, ${sum("duration_ms")} as duration_ms,
      ${sum("timed")} as timed_sessions, ${sum("revenue")} - ${sum("refunds")} as revenue
    from (
      select ${s.measure} as measure, ${slicedSum(matched, s.slice, s.sessions)} as weight
      from ${s} where ${s.projectId} = ${scope.projectId} and ${s.day} = ${day} and ${s.block} = ${block}
      group by ${s.measure}
    ) as per_measure
  )`;
}

/**
 * The row `a` (an alias, or the strings' table) has the value of the row aliased `b`, by a hashable
 * key (the strings hold no empty text, which the routine stores as not set, so "" cannot meet NULL).
 */
function sameValue(a: string | typeof sessionDayBits, b: string): SQL {
  const [name, prefix] =
    typeof a === "string" ? [sql.raw(`${a}.name`), sql.raw(`${a}.prefix`)] : [a.name, a.prefix];
  const y = sql.raw(b);
  return sql`coalesce(${name}, '') = coalesce(${y}.name, '') and coalesce(${prefix}, '') = coalesce(${y}.prefix, '')`;
}

/**
 * The matching sessions of each whole day of the window as session rollup rows (no value:
 * `name` and `prefix` null), a row per block of the day's sessions with the day as `unit`: what
 * the rollup path of `/metrics` sums.
 */
export function maskedDayRows(scope: SessionScope, filters: readonly BitStringFilter[]): SQL {
  return sql`(
    with masks as materialized (${dayMasks(scope, filters, scope.window)})
    select null::text as name, null::text as prefix, m.day as unit, bit_count(m.mask) as sessions, sums.*
    from masks m cross join lateral ${maskedSums(scope, sql`m.day`, sql`m.block`, sql`m.mask`)} as sums
  ) as units`;
}

/** A value of a breakdown: its name and prefix. */
interface ValueKey extends Record<string, unknown> {
  name: string | null;
  prefix: string | null;
}

/** A value's counted row from one part: its matching sessions over the part's days. */
interface ValuePartCount extends PartCount, ValueKey {}

/** The summed weight of one measure of a ranked value over the days of one part. */
interface ValueWeight extends ValueKey {
  measure: string;
  weight: string;
}

/**
 * The values of `dimension` ranked by their matching sessions in the window.
 *
 * Not every value is counted. A value matches no more sessions than it has in the window (its
 * bound, from the day rollups). The values of the largest bounds are counted first; among them,
 * the count at the page's last place (offset + limit + 1) is at most the true one there, so a
 * value whose bound is below it cannot reach the page and its strings are never ANDed
 * (counted-in-parts.ts). A dimension of thousands of values (cities) counts tens of them, not all.
 */
function valueRanking(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  dimension: BreakdownDimension,
): CountedRanking<ValuePartCount> {
  const v = sessionDayBits;
  const r = sessionDayRollups;
  return {
    statementOf: (part, counting, beyond) => sql`
      with masks as materialized (${dayMasks(scope, filters, part)}),
      -- No value matches more sessions than it has in the window (the day rollups, no string read).
      bounds as materialized (
        select name, prefix, bound, row_number() over (order by bound desc, name collate "C", prefix collate "C") as place
        from (
          select ${r.name} as name, ${r.prefix} as prefix, sum(${r.sessions}) as bound from ${r}
          where ${r.projectId} = ${scope.projectId} and ${r.dimension} = ${dimension}
            and ${r.day} >= ${new Date(scope.window.start)} and ${r.day} < ${new Date(scope.window.end)}
          group by ${r.name}, ${r.prefix}
        ) as per_value
      ),
      ${counting}
      select name, prefix, sum(sessions) as sessions, ${beyond} as beyond from counted
      group by name, prefix having sum(sessions) > 0`,
    // The matching sessions per day of the values of `bounds` that `which` keeps: a day's strings of
    // the dimension are one range of the day index, and only the kept values' are ANDed. The test is
    // a hashed subplan (kept from being pulled up into a join by the coalesce): as a join, Postgres
    // hashed the strings instead of the values (35 ms more at 90 days).
    countedOf: (which) => sql`
      select ${v.name} as name, ${v.prefix} as prefix, bit_count(m.mask & ${v.sessions}) as sessions
      from masks m
      join ${v} on ${v.projectId} = ${scope.projectId} and ${v.day} = m.day and ${v.block} = m.block
        and ${v.dimension} = ${dimension}
      where coalesce((coalesce(${v.name}, ''), coalesce(${v.prefix}, '')) in (
        select coalesce(b.name, ''), coalesce(b.prefix, '') from bounds b where ${which}), false)`,
    keyOf: (row) => [row.name, row.prefix],
    key: sql`name, prefix`,
  };
}

/**
 * The ranked values' weights over the days of `part`: per day, the values' matching sessions
 * against each slice of the day. The day's slices are read once into arrays (detoasted once) that
 * every value's strings then walk: joined as rows, every slice was fetched from TOAST again for
 * every value (7 µs an AND at 10M events).
 */
function valueWeightsStatement(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  dimension: BreakdownDimension,
  part: DayPart,
  ranked: readonly ValueKey[],
): SQL {
  const v = sessionDayBits;
  const s = sessionDaySlices;
  return sql`
    with masks as materialized (${dayMasks(scope, filters, part)})
    select w.name, w.prefix, w.measure, sum(w.weight) as weight
    from masks m
    cross join lateral (
      select array_agg(${s.sessions}) as strings, array_agg(${s.slice}) as slices, array_agg(${s.measure}) as measures
      from ${s} where ${s.projectId} = ${scope.projectId} and ${s.day} = m.day and ${s.block} = m.block
    ) as day_slices
    cross join lateral (
      select h.name, h.prefix, u.measure, ${sliceWeight(sql`h.hit`, sql`u.slice`, sql`u.strings`)} as weight
      from (
        select ${v.name} as name, ${v.prefix} as prefix, m.mask & ${v.sessions} as hit
        from ${v} join ${textColumns(ranked, ["name", "prefix"])} as r(name, prefix) on ${sameValue(v, "r")}
        where ${v.projectId} = ${scope.projectId} and ${v.day} = m.day and ${v.block} = m.block
          and ${v.dimension} = ${dimension}
        offset 0
      ) as h
      cross join lateral unnest(day_slices.strings, day_slices.slices, day_slices.measures) as u(strings, slice, measure)
      -- Fences (here and on each value's string): pulled up, each AND was computed again for every
      -- slice, and the weights after a sort that carried the strings.
      offset 0
    ) as w
    group by w.name, w.prefix, w.measure`;
}

/**
 * A breakdown of the matching sessions by `dimension`, as session rollup rows of the page's values
 * only, a FROM item: the values are ranked by their matching sessions first (one AND and count per
 * day and value: valueRanking), and only the page's values are summed from the slices, with one
 * more row that only tells that another page follows (its sums are left at 0); both in parts of
 * the window's days at once (counted-in-parts.ts, day-parts.ts). The caller ranks these rows again
 * (they are already the page) by sessions and key alone, with offset 0. Each string is read once per
 * statement where it can be: a day's strings of the dimension are one range of the day index,
 * then read again only for the page's values.
 */
export async function maskedBreakdownRows(
  db: Database,
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  dimension: BreakdownDimension,
  page: Page,
): Promise<SQL> {
  const ranked = (await rankedInParts(db, scope, valueRanking(scope, filters, dimension), page)).map(
    ({ rows: [first], sessions }) => ({
      name: first?.name ?? null,
      prefix: first?.prefix ?? null,
      sessions: String(sessions),
    }),
  );
  const summed = shownOnPage(ranked, page);
  const weights =
    summed.length === 0
      ? []
      : await rowsOfDayParts<ValueWeight>(db, scope, (part) =>
          valueWeightsStatement(scope, filters, dimension, part, summed),
        );
  return sql`(
    select r.name, r.prefix, r.sessions::numeric as sessions, ${partsWeight("bounce")} as bounces,
      ${partsWeight("screen_views")} as screen_views, ${partsWeight("duration_ms")} as duration_ms,
      ${partsWeight("timed")} as timed_sessions, ${partsWeight("revenue")} - ${partsWeight("refunds")} as revenue
    from ${textColumns(ranked, ["name", "prefix", "sessions"])} as r(name, prefix, sessions)
    left join ${textColumns(weights, ["name", "prefix", "measure", "weight"])} as w(name, prefix, measure, weight)
      on ${sameValue("w", "r")}
    group by r.name, r.prefix, r.sessions
  ) as rows`;
}

/**
 * `/metrics` under two or three filters: the sums of each day's matching sessions from the session
 * strings, unique visitors from the visitor strings. Every number exact.
 */
export async function combinedFilterMetrics(
  db: Database,
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  buckets: number[],
): Promise<MetricsAnswer> {
  // Independent statements, sent together: the visitors do not wait for the sums.
  const [answer, visitors] = await Promise.all([
    summedSessionMetrics(db, maskedDayRows(scope, filters), buckets),
    combinedVisitors(db, scope, filters, buckets),
  ]);
  return { ...withVisitors(answer, visitors), approximate: [] };
}
