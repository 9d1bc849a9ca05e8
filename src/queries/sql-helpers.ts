import { type AnyColumn, type SQL, sql } from "drizzle-orm";

/** `round(numerator * scale / denominator, 2)` in exact decimal arithmetic; 0 when the denominator is 0. */
export function ratio(numerator: SQL, denominator: SQL, scale = 1): SQL<string> {
  return sql<string>`coalesce(round((${numerator})::numeric * ${scale} / nullif(${denominator}, 0), 2), 0)`;
}

/** One bound `timestamptz[]` parameter (bucket edges), never a list of placeholders. */
export function timestampArray(instants: number[]): SQL {
  return sql`${sql.param(instants.map((ms) => new Date(ms).toISOString()))}::timestamptz[]`;
}

/**
 * Numeric text as the filter parser's `isNumericValue` accepts it: at most 100 characters (the
 * lookahead) with a 3-digit exponent, so a `::numeric` cast guarded by it can never fail on stored
 * data. `[.]` avoids backslash escaping.
 */
export const NUMERIC_TEXT_SQL = sql.raw(
  `'^(?=.{1,100}$)[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]{1,3})?$'`,
);

export const toNumber = (value: string | number | null | undefined): number => Number(value ?? 0);

/**
 * The order of the ranked insights lists (contract section 4): largest count first, then the
 * keys in byte order with nulls last, so the order is the same on every database collation.
 */
export function rankOrder(count: SQL, ...keys: Array<SQL | AnyColumn>): SQL[] {
  return [sql`${count} desc`, ...keys.map((key) => sql`${key} collate "C" asc nulls last`)];
}

/** A timestamp as RFC 3339 text in UTC with milliseconds (`2026-11-01T10:02:11.412Z`), written by Postgres. */
export function isoText(column: SQL | AnyColumn): SQL<string> {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * One page of the rows `rows` selects, in `order`, one row more than `page.limit` (whether another
 * page follows), beside `total`, how many rows there are in all: one statement, and one row even
 * past the last page (its row columns null) so the total is always there.
 */
export function pageWithTotal(rows: SQL, order: SQL, page: { limit: number; offset: number }): SQL {
  return sql`with listed as (${rows})
    select counted.total, shown.*
    from (select count(*) as total from listed) as counted
    left join lateral (
      select * from listed order by ${order} limit ${page.limit + 1} offset ${page.offset}
    ) as shown on true`;
}
