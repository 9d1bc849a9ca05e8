import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { eventKeyCatalogue, eventValueCatalogue } from "../../db/schema";
import type { Page } from "../insights/model";
import { pageWithTotal, toNumber } from "../sql-helpers";

/** Discovery lists at most this many values of a key, the most frequent. */
export const LISTED_VALUES = 1000;

export interface ValuesRequest {
  projectId: string;
  /** A catalogue key: a column name or `properties.<key>`. */
  key: string;
  /** Only the events of this name; every name when undefined. */
  eventName?: string;
  /** Case-insensitive literal substring of the value text. */
  search?: string;
  page: Page;
}

export interface ValuesAnswer {
  /** Whether some stored event (of the name) sets the key at all. */
  known: boolean;
  /** The length of the list: matching values, at most LISTED_VALUES. */
  total: number;
  /** Whether the key has more distinct values than LISTED_VALUES. */
  capped: boolean;
  values: Array<{ value: string; count: number }>;
}

/**
 * The values of a key by the number of events carrying them (descending), then text: the top
 * LISTED_VALUES of those matching the search, one page of them. Across event names the counts
 * add up per value. From the catalogue; exact for every tracked value (refresh_catalogue.sql).
 */
export async function propertyValues(db: Database, request: ValuesRequest): Promise<ValuesAnswer> {
  const k = eventKeyCatalogue;
  const v = eventValueCatalogue;
  const ofName = (table: typeof k | typeof v) =>
    request.eventName === undefined ? sql`` : sql` and ${table.name} = ${request.eventName}`;
  const keyRows = await db.execute<{
    known: boolean;
    left_out: boolean;
    distinct_values: string | number;
  }>(sql`
    select count(*) > 0 as known, coalesce(bool_or(${k.valuesLeftOut}), false) as left_out,
      (select count(distinct ${v.value}) from ${v}
        where ${v.projectId} = ${request.projectId} and ${v.key} = ${request.key}${ofName(v)}) as distinct_values
    from ${k}
    where ${k.projectId} = ${request.projectId} and ${k.key} = ${request.key}${ofName(k)}`);
  const keyRow = keyRows.rows[0];
  if (!keyRow?.known) return { known: false, total: 0, capped: false, values: [] };
  const matching =
    request.search === undefined ? sql`` : sql` and strpos(lower(${v.value}), lower(${request.search})) > 0`;
  const result = await db.execute<{
    total: string | number;
    value: string | null;
    count: string | number | null;
  }>(
    pageWithTotal(
      sql`select ${v.value} as value, sum(${v.events}) as count from ${v}
        where ${v.projectId} = ${request.projectId} and ${v.key} = ${request.key}${ofName(v)}${matching}
        group by ${v.value} order by count desc, value collate "C" limit ${LISTED_VALUES}`,
      sql`count desc, value collate "C"`,
      request.page,
    ),
  );
  return {
    known: true,
    total: toNumber(result.rows[0]?.total ?? 0),
    capped: keyRow.left_out || toNumber(keyRow.distinct_values) > LISTED_VALUES,
    values: result.rows.flatMap((row) =>
      row.value === null ? [] : [{ value: row.value, count: toNumber(row.count) }],
    ),
  };
}
