import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessionDayBits, sessionDaySlices } from "../../db/schema";
import type { BreakdownDimension } from "../../lib/dimensions";
import { dimensionValueCondition } from "../filter-conditions";
import { rankOrder } from "../sql-helpers";
import { combinedVisitors } from "./combined-visitors";
import type { DimensionFilter, MetricsAnswer, Page, SessionScope, TimeWindow } from "./model";
import { summedSessionMetrics, withVisitors } from "./rollups";
import { projectDaysBuilt, wholeProjectDays } from "./window-rows";

/**
 * Two or three filters at once, from the bit strings per project day over the day's sessions
 * (src/db/routines/refresh_session_bits.sql): per day, the OR of the strings of the values each
 * filter keeps, ANDed over the filters, is the day's matching sessions (its mask); `bit_count`
 * counts them, and the bit slices of each measure sum them. Exact, and read per day rather than
 * per session. The strings cover whole project days, so the window must be made of them.
 */

/** Whether the window is whole project days that no bucket edge cuts, with their strings built. */
export async function bitStringsCover(
  db: Database,
  scope: SessionScope,
  buckets: readonly number[],
): Promise<boolean> {
  const whole = wholeProjectDays(scope, buckets);
  if (whole.start !== scope.window.start || whole.end !== scope.window.end) return false;
  return projectDaysBuilt(db, scope);
}

/** The masks of the window's days: `day`, `mask`; a day where some filter keeps nothing has none. */
function dayMasks(scope: SessionScope, filters: readonly DimensionFilter[], window: TimeWindow): SQL {
  const b = sessionDayBits;
  const kept = filters.map(
    ({ dimension, filter }, index) => sql`
      select ${index} as filter, ${b.day} as day, ${b.sessions} as sessions from ${b}
      where ${b.projectId} = ${scope.projectId} and ${b.dimension} = ${dimension}
        and ${b.day} >= ${new Date(window.start)} and ${b.day} < ${new Date(window.end)}
        and ${dimensionValueCondition(filter, b.name)}`,
  );
  return sql`
    select day, bit_and(sessions) as mask
    from (select filter, day, bit_or(sessions) as sessions from (${sql.join(kept, sql` union all `)}) as kept group by filter, day) as per_filter
    group by day having count(*) = ${filters.length}`;
}

/**
 * The sums of the sessions in `matched` (a bit string of the day `day`) as the rollups' columns:
 * one pass over the day's slices. A slice's weight is 2^slice; revenue is its positive part less
 * its refunds.
 */
function maskedSums(scope: SessionScope, day: SQL, matched: SQL): SQL {
  const s = sessionDaySlices;
  const sum = (measure: string) =>
    sql`coalesce(sum(bit_count(${matched} & ${s.sessions})::numeric * (1::bigint << ${s.slice})) filter (where ${s.measure} = ${measure}), 0)`;
  return sql`(
    select ${sum("bounce")} as bounces, ${sum("screen_views")} as screen_views, ${sum("duration_ms")} as duration_ms,
      ${sum("timed")} as timed_sessions, ${sum("revenue")} - ${sum("refunds")} as revenue
    from ${s} where ${s.projectId} = ${scope.projectId} and ${s.day} = ${day}
  )`;
}

/**
 * The matching sessions of each whole day of the window as session rollup rows (no value:
 * `name` and `prefix` null), with the day as `unit`: what the rollup path of `/metrics` sums.
 */
export function maskedDayRows(scope: SessionScope, filters: readonly DimensionFilter[]): SQL {
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
  filters: readonly DimensionFilter[],
  dimension: BreakdownDimension,
  page: Page,
): SQL {
  const v = sessionDayBits;
  const values = sql`${v.projectId} = ${scope.projectId} and ${v.dimension} = ${dimension}`;
  const count = sql`sum(bit_count(m.mask & ${v.sessions}))`;
  return sql`(
    with masks as materialized (${dayMasks(scope, filters, scope.window)}),
    ranked as materialized (
      select ${v.name} as name, ${v.prefix} as prefix from masks m join ${v} on ${values} and ${v.day} = m.day
      group by ${v.name}, ${v.prefix} having ${count} > 0
      order by ${sql.join(rankOrder(count, v.name, v.prefix), sql`, `)}
      limit ${page.limit + 1} offset ${page.offset}
    )
    select r.name, r.prefix, bit_count(m.mask & ${v.sessions}) as sessions, sums.*
    from ranked r
    join ${v} on ${values} and ${v.name} is not distinct from r.name and ${v.prefix} is not distinct from r.prefix
    join masks m on m.day = ${v.day}
    cross join lateral ${maskedSums(scope, sql`m.day`, sql`m.mask & ${v.sessions}`)} as sums
  ) as rows`;
}

/**
 * `/metrics` under two or three filters: the sums of each day's matching sessions from the session
 * strings, unique visitors from the visitor strings. Every number exact.
 */
export async function combinedFilterMetrics(
  db: Database,
  scope: SessionScope,
  filters: readonly DimensionFilter[],
  buckets: number[],
): Promise<MetricsAnswer> {
  const answer = await summedSessionMetrics(db, maskedDayRows(scope, filters), buckets);
  if (answer.totals.total_sessions === 0) return { ...answer, approximate: [] };
  const visitors = await combinedVisitors(db, scope, filters, buckets);
  return { ...withVisitors(answer, visitors), approximate: [] };
}
