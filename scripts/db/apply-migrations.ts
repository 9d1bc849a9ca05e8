import path from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";

export const MIGRATIONS_FOLDER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../drizzle");

/** drizzle's record of one applied migration, which it writes after the migration's statements. */
const MIGRATION_RECORD = /^insert into "drizzle"\."__drizzle_migrations"/i;

/**
 * Applies the SQL migrations in drizzle/ that the database has not seen yet, in drizzle's one
 * transaction. `onRan` hears of each as its statements finish: its journal time (`when`) and how
 * long they took, read through drizzle's query logger, which sees the record drizzle writes after
 * each migration (nothing is committed until the last one has run).
 */
export async function migrateDatabase(
  connectionString: string,
  onRan?: (when: number, ms: number) => void,
): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  let since = 0;
  const logger = {
    logQuery(query: string, params: unknown[]) {
      if (!MIGRATION_RECORD.test(query.trim())) return;
      const now = performance.now();
      onRan?.(Number(params[1]), Math.round(now - since));
      since = now;
    },
  };
  try {
    // Keep Postgres' NOTICEs (e.g. "schema already exists") out of the console.
    await client.query("SET client_min_messages = warning");
    since = performance.now();
    await migrate(drizzle(client, { logger }), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await client.end();
  }
}
