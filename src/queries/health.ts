import { sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { postgresError } from "../db/connection-errors";

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
    // undefined_table (or its schema): reachable, but never migrated.
    if (postgresError(error)?.code === "42P01" || postgresError(error)?.code === "3F000") return [];
    throw error;
  }
}
