import { eq, sql } from "drizzle-orm";
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

/** When the derived tables were last refreshed, and how long ago by the database's clock. */
export interface DerivedRefreshAge {
  lastRunAt: Date | null;
  ageSeconds: number | null;
}

/**
 * The last run of the refresh's session family (its row of derived_state, which every run stamps
 * with `now()`, the start of its transaction, whether called by `refresh_derived()` or the cron)
 * and its age; both null before the first run or on a database without the table. The event
 * family's rows are stamped only by runs that found new events, so an idle project would age them.
 */
export async function derivedRefreshAge(db: Database): Promise<DerivedRefreshAge> {
  try {
    const [row] = await db
      .select({
        lastRunAt: derivedState.lastRunAt,
        ageSeconds: sql<
          number | null
        >`floor(extract(epoch from statement_timestamp() - ${derivedState.lastRunAt}))::integer`,
      })
      .from(derivedState)
      .where(eq(derivedState.name, "sessions"));
    return { lastRunAt: row?.lastRunAt ?? null, ageSeconds: row?.ageSeconds ?? null };
  } catch (error) {
    if (notMigrated(error)) return { lastRunAt: null, ageSeconds: null };
    throw error;
  }
}
