import type { QueryResultRow } from "@neondatabase/serverless";
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bucketStarts } from "../../lib/buckets";
import { dealtInTurn, partsForDays } from "../statement-parts";
import type { DayPart, SessionScope, TimeWindow } from "./model";

/**
 * The bit strings' sums over a long window, read in parts of its days at once (statement-parts.ts):
 * summing a ranked page's or value's slices is work per (day, slice) that no index shortens. The
 * sums are added back together by the statement that ranks them.
 */

/**
 * The window (whole project days) cut into parts of its days (partsForDays), dealt out in turn; a
 * short window is one part.
 */
export function dayParts(window: TimeWindow, timezone: string): DayPart[] {
  const midnights = bucketStarts(window, "day", timezone);
  const parts = partsForDays(midnights.length);
  if (parts <= 1) return [window];
  return dealtInTurn(midnights, parts).map((days) => ({ ...window, days }));
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

/** A measure's weight summed over the parts' rows `w` (`measure`, `weight` as text), 0 without any. */
export function partsWeight(measure: string): SQL {
  return sql`coalesce(sum(w.weight::numeric) filter (where w.measure = ${measure}), 0)`;
}
