import type { QueryResultRow } from "@neondatabase/serverless";
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bucketStarts } from "../../lib/buckets";
import type { DayPart, SessionScope, TimeWindow } from "./model";

/**
 * The bit strings' sums over a long window, read in parts of its days at once. Summing a ranked
 * page's or value's slices is work per (day, slice) that no index shortens (an AND and a count of
 * each string), and one statement runs on one core: the window's days, cut into consecutive runs
 * and each run summed by its own statement on its own connection of the request's pool, are summed
 * by as many server processes at once, as Postgres's parallel workers would if its planner knew
 * what an AND costs. The sums are added back together by the statement that ranks them.
 */

/** Statements a long window is cut into: Postgres's own default for a parallel plan (a leader and two workers' worth). */
const MOST_PARTS = 2;

/** Fewer days than this a part does not pay for the connection and the round trip it takes. */
const LEAST_DAYS_PER_PART = 7;

/**
 * The window (whole project days) cut into at most MOST_PARTS parts of its days, each at least
 * LEAST_DAYS_PER_PART days; a short window is one part. The days are dealt out in turn (the first
 * part the first, third, fifth day…), so that every part holds as many early and late days: a
 * site's traffic grows or falls over a quarter, and cut into runs, the part of the busier weeks
 * was the one the answer waited for (124 against 107 ms of slices at 90 days, 10M events).
 */
export function dayParts(window: TimeWindow, timezone: string): DayPart[] {
  const midnights = bucketStarts(window, "day", timezone);
  const parts = Math.min(MOST_PARTS, Math.floor(midnights.length / LEAST_DAYS_PER_PART));
  if (parts <= 1) return [window];
  return Array.from({ length: parts }, (_, index) => ({
    ...window,
    days: midnights.filter((_, position) => position % parts === index),
  }));
}

/** How many statements at once a scope's window is read in (its parts, dayParts). */
export const windowParts = (scope: SessionScope): number =>
  dayParts(scope.window, scope.projectTimezone).length;

/** The rows of one statement per part of the window, run at once, in the parts' order. */
export async function rowsOfDayParts<Row extends QueryResultRow>(
  db: Database,
  scope: SessionScope,
  statementOf: (part: DayPart) => SQL,
): Promise<Row[]> {
  const results = await Promise.all(
    dayParts(scope.window, scope.projectTimezone).map((part) => db.execute<Row>(statementOf(part))),
  );
  // The driver types a row as `Row` once `Row` is known; for a generic `Row` the type stays unresolved.
  return results.flatMap((result) => result.rows as Row[]);
}

/**
 * Rows of one statement handed to the next as a FROM item: one `unnest` of a text array per
 * column, so as many parameters however many rows (the columns are cast back where they are used).
 */
export function textColumns<Row extends Record<string, unknown>>(
  rows: readonly Row[],
  columns: readonly (keyof Row)[],
): SQL {
  const arrays = columns.map((column) => sql`${sql.param(rows.map((row) => row[column] ?? null))}::text[]`);
  return sql`unnest(${sql.join(arrays, sql`, `)})`;
}

/** A measure's weight summed over the parts' rows `w` (`measure`, `weight` as text), 0 without any. */
export function partsWeight(measure: string): SQL {
  return sql`coalesce(sum(w.weight::numeric) filter (where w.measure = ${measure}), 0)`;
}
