import { type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Filter } from "../lib/filter-parser";
import { dimensionValueCondition } from "./filter-conditions";
import { timestampArray } from "./sql-helpers";

/**
 * Bit strings per project day, cut into blocks (or chunks) and kept per (dimension, value): the
 * session and visitor strings of the insights (src/queries/insights/session-masks.ts) and the
 * event strings of the charts (src/queries/charts/event-bits.ts). Their columns, by role.
 */
export interface DayStrings {
  table: PgTable;
  projectId: PgColumn;
  day: PgColumn;
  /** The block of the day's numbers (or the chunk of the project's visitors) a string covers. */
  chunk: PgColumn;
  dimension: PgColumn;
  /** The value, NULL for "not set". */
  name: PgColumn;
  strings: PgColumn;
}

/** One filter over the strings of one dimension. */
export interface StringsFilter {
  dimension: string;
  filter: Filter;
}

/** The days read: a half-open range of instants, and optionally only the days starting at `days`. */
export interface StringDays {
  start: number;
  end: number;
  days?: readonly number[];
}

/** Whether a string's `day` lies in the days read (their range, and with `days.days` only those). */
export function inStringDays(day: PgColumn, days: StringDays): SQL {
  return sql`${day} >= ${new Date(days.start)} and ${day} < ${new Date(days.end)}
    ${days.days ? sql`and ${day} = any(${timestampArray([...days.days])})` : sql``}`;
}

/**
 * The filters' strings in the days, combined per day and block (or chunk): the OR of the strings
 * of the values each filter keeps, ANDed over the filters. Rows `day`, `chunk`, `strings`; a block
 * where some filter keeps nothing has no row.
 */
export function combinedDayStrings(
  strings: DayStrings,
  projectId: string,
  filters: readonly StringsFilter[],
  days: StringDays,
): SQL {
  const kept = filters.map(
    ({ dimension, filter }, index) => sql`
      select ${index} as filter, ${strings.day} as day, ${strings.chunk} as chunk, ${strings.strings} as strings
      from ${strings.table}
      where ${strings.projectId} = ${projectId} and ${strings.dimension} = ${dimension}
        and ${inStringDays(strings.day, days)} and ${dimensionValueCondition(filter, strings.name)}`,
  );
  return sql`
    select day, chunk, bit_and(strings) as strings
    from (
      select filter, day, chunk, bit_or(strings) as strings from (${sql.join(kept, sql` union all `)}) as kept
      group by filter, day, chunk
    ) as per_filter
    group by day, chunk having count(*) = ${filters.length}`;
}

/** A table of which property paths have strings per project day (property_day_paths, event_property_day_paths). */
export interface PropertyDayPaths {
  table: PgTable;
  projectId: PgColumn;
  day: PgColumn;
  path: PgColumn;
  names: PgColumn;
}

/**
 * Whether some day of `days` lacks the strings of a property path: it passed a bound there (NULL
 * values), or `lacking` says so of its row. A day without a row for the path has no value of it,
 * so its strings are right to find nothing.
 */
export function propertyDaysLacking(
  paths: PropertyDayPaths,
  projectId: string,
  path: readonly string[],
  days: StringDays,
  lacking?: SQL,
): SQL {
  return sql`exists (select 1 from ${paths.table} where ${paths.projectId} = ${projectId}
    and ${paths.path} = ${sql.param([...path])}::text[]
    and ${paths.day} >= ${new Date(days.start)} and ${paths.day} < ${new Date(days.end)}
    and (${paths.names} is null${lacking ? sql` or ${lacking}` : sql``}))`;
}
