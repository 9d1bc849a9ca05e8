import type { QueryResultRow } from "@neondatabase/serverless";
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { byteOrderNullsLast } from "../../lib/byte-order";
import { dayParts, rowsOfDayParts } from "./day-parts";
import type { DayPart, Page, SessionScope } from "./model";

/**
 * The ranking of values (or pages) by their matching sessions under two or three filters, counted
 * in parts of the window's days at once, as their sums are (day-parts.ts): a value's count is one
 * AND and count of its string per day, so the parts' counts add up. Which values are counted is
 * decided over the whole window (by their bounds, below), so a long window's parts meet twice at
 * most: the values of the largest bounds first, then, only if some other value's bound reaches the
 * count at the page's last place among them, those values.
 */

/**
 * How many values (or pages) are counted first, per row the page needs (its offset, its rows and
 * one more): enough that the page's last count among them is close to the true one even when the
 * filters favour values that are not the largest overall (a country filter under a city breakdown).
 */
const FIRST_COUNTED_PER_NEEDED = 4;

/**
 * The CTEs `counted_first`, `least_needed` and `counted` of a ranking that prunes by bounds: after
 * a CTE `bounds` (each value's `bound` and `place` by bound), the values of the largest bounds are
 * counted first; among them, the count at the page's last place (offset + limit + 1) is at most the
 * true one there, so only the other values whose bound reaches it are counted too. `countedOf`
 * gives the counted rows of the values of `bounds b` that its condition keeps; `key` lists the
 * columns of a value.
 */
function countedWithinBounds(countedOf: (which: SQL) => SQL, key: SQL, page: Page): SQL {
  const needed = page.offset + page.limit + 1;
  const firstCounted = needed * FIRST_COUNTED_PER_NEEDED;
  return sql`
    counted_first as materialized (${countedOf(sql`b.place <= ${firstCounted}`)}),
    least_needed as materialized (
      select coalesce((select sessions from (
        select sum(sessions) as sessions from counted_first group by ${key}
      ) as per_value order by sessions desc limit 1 offset ${needed - 1}), 0) as sessions
    ),
    counted as materialized (
      select * from counted_first
      union all
      ${countedOf(sql`b.place > ${firstCounted} and b.bound >= (select sessions from least_needed)`)}
    )`;
}

/** A value's counted row from one part: its columns (text), its matching sessions over the part's days. */
export interface PartCount extends Record<string, unknown> {
  sessions: string;
  /** The largest bound among the values not counted first (null when there is none). */
  beyond: string | null;
}

/** How a ranking reads its values' counts (page-bits.ts, session-bits.ts). */
export interface CountedRanking<Row extends PartCount> {
  /**
   * The statement of one part's days: the CTEs of the part's masks and of the window's `bounds`
   * (with a page), then `counting` (CTEs ending in `counted`), then one row per value of `counted`
   * with a matching session, carrying `beyond` as a column.
   */
  statementOf(part: DayPart, counting: SQL, beyond: SQL): SQL;
  /** The counted strings of the values of `bounds b` that `which` keeps. */
  countedOf(which: SQL): SQL;
  /** A value's columns, in the ranking's order after its count (each `collate "C"`, nulls last). */
  keyOf(row: Row): readonly (string | null)[];
  /** The same columns in SQL, for the one-statement ranking. */
  key: SQL;
}

/** A ranked value: its parts' rows and its matching sessions over the window. */
export interface RankedValue<Row> {
  rows: Row[];
  sessions: number;
}

/** The values' rows of every part, grouped per value and summed, in their parts' order. */
function summedPerValue<Row extends PartCount>(ranking: CountedRanking<Row>, rows: readonly Row[]) {
  const values = new Map<string, RankedValue<Row> & { key: readonly (string | null)[] }>();
  for (const row of rows) {
    const key = ranking.keyOf(row);
    const id = JSON.stringify(key);
    const value = values.get(id) ?? { key, rows: [], sessions: 0 };
    value.rows.push(row);
    value.sessions += Number(row.sessions);
    values.set(id, value);
  }
  return [...values.values()];
}

/** The ranking's order: the most matching sessions first, then the columns in "C" order, NULL last. */
function byRank(
  a: { sessions: number; key: readonly (string | null)[] },
  b: { sessions: number; key: readonly (string | null)[] },
) {
  if (a.sessions !== b.sessions) return b.sessions - a.sessions;
  for (let index = 0; index < a.key.length; index++) {
    const order = byteOrderNullsLast(a.key[index] ?? null, b.key[index] ?? null);
    if (order !== 0) return order;
  }
  return 0;
}

/**
 * The ranked values whose sums a page shows: all but the one past the page, which an answer holds
 * only to tell that another page follows (the route reads its presence, never its figures), so
 * its slices are not summed: a tenth of that work on a page of ten.
 */
export function shownOnPage<T>(ranked: readonly T[], page: Page | undefined): readonly T[] {
  return page === undefined ? ranked : ranked.slice(0, page.limit);
}

/**
 * The values with a matching session in the window, ranked and cut to `page` and one row more
 * (without `page`, every one of them, unordered). A window of one part is one statement, its
 * rounds in CTEs; a longer one counts the first values in every part at once, and the others only
 * when one of them can reach the page (then once more in every part).
 */
export async function rankedInParts<Row extends PartCount & QueryResultRow>(
  db: Database,
  scope: SessionScope,
  ranking: CountedRanking<Row>,
  page?: Page,
): Promise<RankedValue<Row>[]> {
  const parts = dayParts(scope.window, scope.projectTimezone);
  const needed = page ? page.offset + page.limit + 1 : 0;
  const firstCounted = needed * FIRST_COUNTED_PER_NEEDED;
  const beyond = page ? sql`(select max(bound) from bounds where place > ${firstCounted})` : sql`null`;
  // Materialized: flattened into the ranking, its strings would be sorted before they are counted.
  const counted = (which: SQL) => sql`counted as materialized (${ranking.countedOf(which)})`;
  const round = (counting: SQL): Promise<Row[]> =>
    rowsOfDayParts<Row>(db, scope, (part) => ranking.statementOf(part, counting, beyond));

  let rows: Row[];
  if (page === undefined) rows = await round(counted(sql`true`));
  else if (parts.length === 1) rows = await round(countedWithinBounds(ranking.countedOf, ranking.key, page));
  else {
    rows = await round(counted(sql`b.place <= ${firstCounted}`));
    // The count at the page's last place among the values counted first is at most the true one
    // there: only a value whose bound reaches it can take a place on the page.
    const first = summedPerValue(ranking, rows).map((value) => value.sessions);
    const leastNeeded = first.sort((a, b) => b - a)[needed - 1] ?? 0;
    // No row at all says nothing of the other values' bounds: they are counted.
    const largestBeyond = rows.length === 0 ? leastNeeded : Number(rows[0]?.beyond ?? -1);
    if (largestBeyond >= leastNeeded) {
      rows = rows.concat(
        await round(counted(sql`b.place > ${firstCounted} and b.bound >= ${String(leastNeeded)}::numeric`)),
      );
    }
  }
  const values = summedPerValue(ranking, rows).filter((value) => value.sessions > 0);
  if (page === undefined) return values;
  return values.sort(byRank).slice(page.offset, needed);
}
