import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/client";

/** refreshUntilFolded's statement runner over a Drizzle handle (the Neon driver through the relay). */
export const drizzleStatements = (db: Database) => (text: string) =>
  db.execute<Record<string, unknown>>(sql.raw(text));

/**
 * Runs `refresh_derived()` until the named derived families (every one when none is named) hold
 * every event of the projects (of every project when none is named). Their watermark is the oldest
 * transaction still running anywhere on the server, so another test's open transaction (in any
 * database of it) can hold a run back for a moment; a test that reads derived rows waits for them
 * here rather than reading a run that left some of its events to the next (insertEvents in
 * test/support/factories.ts refreshes through it).
 */
export async function refreshUntilFolded(
  query: (text: string) => Promise<{ rows: Array<Record<string, unknown>> }>,
  families: readonly string[],
  projectIds: readonly string[] = [],
): Promise<void> {
  const quoted = (values: readonly string[]) =>
    values.map((value) => `'${value.replaceAll("'", "''")}'`).join(", ");
  const ofProjects = projectIds.length === 0 ? "" : ` WHERE project_id IN (${quoted(projectIds)})`;
  const ofFamilies = families.length === 0 ? "" : ` WHERE name IN (${quoted(families)})`;
  // Two minutes, as the seed waits: a bulk derive elsewhere (a test's 200,000 events took 49 s
  // on a busy machine) holds the oldest transaction that long.
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    await query("SELECT refresh_derived()");
    const { rows } = await query(
      `SELECT coalesce((SELECT min(processed_xid) FROM derived_state${ofFamilies}), 0)
              > coalesce((SELECT max(ingest_xid) FROM events${ofProjects}), -1) AS folded`,
    );
    if (rows[0]?.folded === true) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${families.join(", ") || "the derived tables"} never caught up with the events`);
}
