import { inArray, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { postgresError } from "../db/connection-errors";
import { derivedState } from "../db/schema";

/** undefined_table (or its schema): the database is reachable but not migrated that far. */
function notMigrated(error: unknown): boolean {
  const code = postgresError(error)?.code;
  return code === "42P01" || code === "3F000";
}

/**
 * The journal times (`created_at`) of the migrations drizzle recorded as applied; none on a
 * database that was never migrated (no `drizzle.__drizzle_migrations`). Throws when Postgres is
 * unreachable (the health check's round trip).
 */
export async function appliedMigrationTimes(db: Database): Promise<number[]> {
  try {
    const result = await db.execute<{ created_at: string }>(
      sql`select created_at::text as created_at from drizzle.__drizzle_migrations`,
    );
    return result.rows.map((row) => Number(row.created_at));
  } catch (error) {
    if (notMigrated(error)) return [];
    throw error;
  }
}

/** When a part of the derived tables was last refreshed, and how long ago by the database's clock. */
export interface RefreshAge {
  lastRunAt: Date | null;
  ageSeconds: number | null;
}

/** The session family's last run, and the session strings' beside it. */
export interface DerivedRefreshAge extends RefreshAge {
  /** The bit strings that answer two or three filters: folded after the family, up to a run behind it. */
  strings: RefreshAge;
}

const NEVER: RefreshAge = { lastRunAt: null, ageSeconds: null };

/**
 * The last run of the refresh's session family (its row of derived_state, which every run stamps
 * with `now()`, the start of its transaction, whether called by `refresh_derived()` or the cron)
 * and of the session strings (`session_bits`, stamped by refresh_session_strings, which the cron
 * runs on its other connection), with their ages; null before the first run or on a database
 * without the table. The event family's rows are stamped only by runs that found new events, so
 * an idle project would age them.
 */
export async function derivedRefreshAge(db: Database): Promise<DerivedRefreshAge> {
  try {
    const rows = await db
      .select({
        name: derivedState.name,
        lastRunAt: derivedState.lastRunAt,
        ageSeconds: sql<
          number | null
        >`floor(extract(epoch from statement_timestamp() - ${derivedState.lastRunAt}))::integer`,
      })
      .from(derivedState)
      .where(inArray(derivedState.name, ["sessions", "session_bits"]));
    const age = (name: string): RefreshAge => {
      const row = rows.find((candidate) => candidate.name === name);
      return row ? { lastRunAt: row.lastRunAt ?? null, ageSeconds: row.ageSeconds ?? null } : NEVER;
    };
    return { ...age("sessions"), strings: age("session_bits") };
  } catch (error) {
    if (notMigrated(error)) return { ...NEVER, strings: NEVER };
    throw error;
  }
}
