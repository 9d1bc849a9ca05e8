import pg from "pg";

/**
 * The steps of a bulk load around the COPY: dropping a table's indexes before it and rebuilding
 * them after it (each once, instead of row by row), and, after the commit, deriving the sessions
 * on one connection while a second builds the remaining events indexes and the event rollups.
 */

export interface IndexDefinition {
  name: string;
  /** The statement that recreates it. */
  definition: string;
}

interface DroppedIndexes {
  /** The primary key, when it was dropped. */
  primary?: IndexDefinition;
  /** The other indexes, by name. */
  secondary: IndexDefinition[];
}

export const NOTHING_DROPPED: DroppedIndexes = { secondary: [] };

/**
 * Drops the indexes of `table` (and, with `primaryKey`, its primary key when nothing references
 * it) inside the current transaction: building them once after a bulk load is several times
 * faster than maintaining them row by row. Their definitions are read from the catalog, so this
 * follows whatever the migrations made. Indexes that back a constraint other than that primary
 * key stay.
 */
export async function dropIndexes(
  client: pg.ClientBase,
  table: string,
  primaryKey: boolean,
): Promise<DroppedIndexes> {
  const dropped: DroppedIndexes = { secondary: [] };
  if (primaryKey) {
    const constraints = await client.query<{ name: string; definition: string; referenced: boolean }>(
      `SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS definition,
         EXISTS (SELECT 1 FROM pg_constraint f WHERE f.confrelid = c.conrelid) AS referenced
       FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype = 'p'`,
      [table],
    );
    const primary = constraints.rows[0];
    if (primary !== undefined && !primary.referenced) {
      await client.query(`ALTER TABLE ${quoteIdent(table)} DROP CONSTRAINT ${quoteIdent(primary.name)}`);
      dropped.primary = {
        name: primary.name,
        definition: `ALTER TABLE ${quoteIdent(table)} ADD CONSTRAINT ${quoteIdent(primary.name)} ${primary.definition}`,
      };
    }
  }
  const indexes = await client.query<IndexDefinition>(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
     WHERE x.indrelid = $1::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
     ORDER BY i.relname`,
    [table],
  );
  for (const index of indexes.rows) {
    await client.query(`DROP INDEX ${quoteIdent(index.name)}`);
    dropped.secondary.push(index);
  }
  return dropped;
}

/** Room for sorting an index build (a session setting: the server's configuration stays as is). */
export const INDEX_BUILD_MEMORY = "256MB";

/**
 * Derives the sessions of the freshly committed events: `refresh_derived()` in a transaction that
 * first drops the sessions table's secondary indexes and rebuilds them afterwards (the routine then
 * inserts its rows with only the primary key to maintain, which its ON CONFLICT needs). Atomic: on
 * failure the sessions and their indexes stay as they were.
 */
export async function deriveSessions(client: pg.ClientBase): Promise<void> {
  await client.query("BEGIN");
  try {
    const dropped = await dropIndexes(client, "sessions", false);
    await client.query("SELECT refresh_derived()");
    if (dropped.secondary.length > 0) {
      await client.query(`SET LOCAL maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
      for (const index of dropped.secondary) await client.query(index.definition);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/**
 * Builds the events indexes that the load committed without, on a connection of its own (CREATE
 * INDEX takes a SHARE lock, so refresh_derived() can read the events meanwhile), then gathers
 * statistics for the loaded tables. Each index is built in its own transaction; the error names
 * every one that is missing, with the statement that recreates it.
 */
export async function buildEventIndexes(
  connectionString: string,
  indexes: readonly IndexDefinition[],
): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SET client_min_messages = warning");
    await client.query("SET synchronous_commit = off");
    await client.query(`SET maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
    // No parallel workers: refresh_derived() on the other connection is the longer job, and with
    // two cores the builds' workers would only take CPU away from it.
    await client.query("SET max_parallel_maintenance_workers = 0");
    const missing: IndexDefinition[] = [];
    let failure: unknown;
    for (const index of indexes) {
      if (failure !== undefined) {
        missing.push(index);
        continue;
      }
      try {
        await client.query(index.definition);
      } catch (error) {
        failure = error;
        missing.push(index);
      }
    }
    await client.query("ANALYZE events, profiles");
    if (failure !== undefined) {
      const reason = failure instanceof Error ? failure.message : String(failure);
      throw new Error(
        `the events were loaded, but rebuilding their indexes failed (${reason}); queries work without ` +
          `them but slowly. Missing: ${missing.map((i) => i.name).join(", ")}. Recreate them with:\n` +
          missing.map((i) => `  ${i.definition};`).join("\n"),
        { cause: failure },
      );
    }
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Builds the event rollups on the second connection while refresh_derived() derives the sessions
 * on the first: they read only events. refresh_derived() then waits for this build (its lock)
 * and finds the watermark past every loaded event.
 */
export async function buildEventRollups(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SET synchronous_commit = off");
    await client.query(
      "SELECT refresh_event_rollups((pg_snapshot_xmin(pg_current_snapshot())::text)::bigint)",
    );
  } finally {
    await client.end().catch(() => {});
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
