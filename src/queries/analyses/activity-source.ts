import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { activityTimezones } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";

/** What decides whether an analysis reads the activity aggregates or the events. */
export interface ActivitySource {
  projectId: string;
  /** The request's timezone, and the project's own (the aggregates' days and weeks are its days). */
  timezone: string;
  projectTimezone: string;
  /** Whether derived tables may answer (wrangler var ROLLUPS, "off" forces the exact path). */
  rollups: boolean;
  filters: Filter[];
}

/**
 * Whether the per-profile activity aggregates (src/db/schema/profile-activity.ts) answer exactly:
 * no filters (they hold every event), days of the project's timezone, built in that timezone
 * (activity_timezones). One small query, asked before the analysis so that its statement holds
 * one path only.
 */
export async function activityAggregatesAnswer(db: Database, source: ActivitySource): Promise<boolean> {
  if (!source.rollups || source.filters.length > 0 || source.timezone !== source.projectTimezone)
    return false;
  const result = await db.execute<{ built: boolean }>(sql`select exists (
    select 1 from ${activityTimezones}
    where ${and(eq(activityTimezones.projectId, source.projectId), eq(activityTimezones.timezone, source.timezone))}
  ) as built`);
  return result.rows[0]?.built === true;
}

/** Days since 1970-01-01 of a `date` column, the day numbers the analyses count in. */
export const dayNumber = (column: unknown) => sql`(${column} - date '1970-01-01')`;

/** A day number as a `date`. */
export const dateOfDay = (day: number) => sql`(date '1970-01-01' + ${day}::int)`;
