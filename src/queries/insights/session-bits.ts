import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessionDayBits, sessionDaySlices } from "../../db/schema";
import type { BreakdownDimension } from "../../lib/dimensions";
import { rankOrder } from "../sql-helpers";
import { combinedVisitors } from "./combined-visitors";
import type { BitStringFilter, MetricsAnswer, Page, SessionScope } from "./model";
import { summedSessionMetrics, withVisitors } from "./rollups";
import { dayMasks, slicedSum } from "./session-masks";

/**
 * Two or three filters at once, from the bit strings per project day over the day's sessions
 * (src/db/routines/refresh_session_bits.sql): per day, the OR of the strings of the values each
 * filter keeps, ANDed over the filters, is the day's matching sessions (its mask); `bit_count`
 * counts them, and the bit slices of each measure sum them. Exact, and read per day rather than
 * per session. The strings cover whole project days, so the window must be made of them.
 */

/**
 * The sums of the sessions in `matched` (a bit string of the day `day`, a column so that it is
 * computed once) as the rollups' columns: one AND and count per slice of the day, weighted by
 * 2^slice and summed per measure first (pivoted from the rows of a subquery, each FILTER would
 * compute its ANDs again). Revenue is its positive part less its refunds.
 */
function maskedSums(scope: SessionScope, day: SQL, matched: SQL): SQL {
  const s = sessionDaySlices;
  const sum = (measure: string) => sql`coalesce(sum(weight) filter (where measure = ${measure}), 0)`;
  return sql`(
    select ${sum("bounce")} as bounces, ${sum("screen_views")} as screen_views, ${sum("duration_ms")} as duration_ms,
      ${sum("timed")} as timed_sessions, ${sum("revenue")} - ${sum("refunds")} as revenue
    from (
      select ${s.measure} as measure, ${slicedSum(matched, s.slice, s.sessions)} as weight
      from ${s} where ${s.projectId} = ${scope.projectId} and ${s.day} = ${day}
      group by ${s.measure}
    ) as per_measure
  )`;
}

/**
 * The matching sessions of each whole day of the window as session rollup rows (no value:
 * `name` and `prefix` null), with the day as `unit`: what the rollup path of `/metrics` sums.
 */
export function maskedDayRows(scope: SessionScope, filters: readonly BitStringFilter[]): SQL {
  return sql`(
    with masks as materialized (${dayMasks(scope, filters, scope.window)})
    select null::text as name, null::text as prefix, m.day as unit, bit_count(m.mask) as sessions, sums.*
    from masks m cross join lateral ${maskedSums(scope, sql`m.day`, sql`m.mask`)} as sums
  ) as units`;
}

/**
 * A breakdown of the matching sessions by `dimension`, as session rollup rows of the page's values
 * only: the values are ranked by their matching sessions first (one AND and count per day and
 * value), and only the page's values, one more than the page, are summed from the slices. The
 * caller ranks these rows again (they are already the page) with offset 0.
 */
export function maskedBreakdownRows(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  dimension: BreakdownDimension,
  page: Page,
): SQL {
  const v = sessionDayBits;
  const values = sql`${v.projectId} = ${scope.projectId} and ${v.dimension} = ${dimension}`;
  const count = sql`sum(sessions)`;
  return sql`(
    with masks as materialized (${dayMasks(scope, filters, scope.window)}),
    -- Materialized: flattened into the ranking, its strings would be sorted before they are counted.
    counted as materialized (
      select ${v.name} as name, ${v.prefix} as prefix, bit_count(m.mask & ${v.sessions}) as sessions
      from masks m join ${v} on ${values} and ${v.day} = m.day
    ),
    ranked as materialized (
      select name, prefix from counted
      group by name, prefix having ${count} > 0
      order by ${sql.join(rankOrder(count, sql`name`, sql`prefix`), sql`, `)}
      limit ${page.limit + 1} offset ${page.offset}
    ),
    hits as materialized (
      select r.name, r.prefix, m.day, m.mask & ${v.sessions} as hit
      from ranked r
      join ${v} on ${values} and ${v.name} is not distinct from r.name and ${v.prefix} is not distinct from r.prefix
      join masks m on m.day = ${v.day}
    )
    select h.name, h.prefix, bit_count(h.hit) as sessions, sums.*
    from hits h cross join lateral ${maskedSums(scope, sql`h.day`, sql`h.hit`)} as sums
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
