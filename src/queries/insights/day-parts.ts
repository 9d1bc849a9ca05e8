import type { QueryResultRow } from "@neondatabase/serverless";
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bucketStarts } from "../../lib/buckets";
import type { SessionScope, TimeWindow } from "./model";

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
 * The window (whole project days) cut into at most MOST_PARTS runs of consecutive days, as even
 * as whole days make them, each at least LEAST_DAYS_PER_PART days long; a short window is one part.
 */
export function dayParts(window: TimeWindow, timezone: string): TimeWindow[] {
  const midnights = bucketStarts(window, "day", timezone);
  if (midnights.length === 0) return [window];
  const parts = Math.max(1, Math.min(MOST_PARTS, Math.floor(midnights.length / LEAST_DAYS_PER_PART)));
  return Array.from({ length: parts }, (_, index) => {
    const first = Math.floor((index * midnights.length) / parts);
    const next = Math.floor(((index + 1) * midnights.length) / parts);
    return { start: midnights[first] as number, end: midnights[next] ?? window.end };
  });
}

/** The rows of one statement per part of the window, run at once, in the parts' order. */
export async function rowsOfDayParts<Row extends QueryResultRow>(
  db: Database,
  scope: SessionScope,
  statementOf: (part: TimeWindow) => SQL,
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
