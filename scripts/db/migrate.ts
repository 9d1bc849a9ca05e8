/**
 * Applies the SQL migrations in drizzle/ that the database has not seen yet.
 *
 *   npm run db:migrate
 *
 * Targets DATABASE_URL, else the embedded database in .data/pglite (the one `npm run dev` serves
 * when it is running).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { withTargetDatabase } from "../local/target-database";
import { MIGRATIONS_FOLDER, migrateDatabase } from "./apply-migrations";

interface JournalEntry {
  tag: string;
  when: number;
}

async function readJournal(): Promise<JournalEntry[]> {
  const text = await readFile(path.join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8");
  return (JSON.parse(text) as { entries: JournalEntry[] }).entries;
}

/** `created_at` (the journal's `when`) of the migrations drizzle has recorded as applied. */
async function appliedMigrations(url: string): Promise<Set<number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const exists = await client.query<{ exists: boolean }>(
      "SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS exists",
    );
    if (exists.rows[0]?.exists !== true) return new Set();
    const rows = await client.query<{ created_at: string }>(
      "SELECT created_at::text AS created_at FROM drizzle.__drizzle_migrations",
    );
    return new Set(rows.rows.map((row) => Number(row.created_at)));
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const journal = await readJournal();
  await withTargetDatabase(async (url, target) => {
    process.stdout.write(`migrating ${target.label}\n`);
    const before = await appliedMigrations(url);
    const tags = new Map(journal.map((entry) => [entry.when, entry.tag]));
    const began = performance.now();
    await migrateDatabase(url, (when, ms) => {
      process.stdout.write(`ran ${tags.get(when) ?? when} in ${ms.toLocaleString("en-US")} ms\n`);
    });
    const millis = Math.round(performance.now() - began);
    const after = await appliedMigrations(url);
    const applied = journal.filter((entry) => after.has(entry.when) && !before.has(entry.when));
    if (applied.length === 0) {
      process.stdout.write(`already up to date (${after.size} migrations applied)\n`);
    } else {
      process.stdout.write(
        `${applied.length} migration(s) applied in ${millis} ms, in one transaction (${after.size} in total)\n`,
      );
    }
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `migration failed: ${error instanceof Error ? error.message : String(error)}; none of this run's migrations was applied (one transaction)\n`,
  );
  process.exitCode = 1;
});
