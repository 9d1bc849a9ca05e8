import { sql } from "drizzle-orm";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { createScratchDatabase } from "../../scripts/db/scratch-database";
import {
  connect,
  createOrganization,
  createProject,
  type EventInput,
  insertEvents,
} from "../support/factories";
import { rawConnection } from "../support/node/database";
import { generateTraffic } from "../support/traffic";
import { drizzleStatements, refreshUntilFolded } from "../support/watermarks";

/**
 * set_aside_indexes and restore_indexes (src/db/routines/set_aside_indexes.sql,
 * restore_indexes.sql): a full build drops a rollup table's indexes before it writes the table and
 * makes them again after. Whatever the table's indexes are (a primary key, a unique constraint with
 * NULLS NOT DISTINCT, a partial or an expression index), they come back as they were, and a
 * rollback of the build brings them back too.
 */

const TABLE = "set_aside_indexes_probe";

let client: pg.Client;

/** Every index of the probe table with its definition and the constraint it backs, if any. */
async function indexesOfProbe() {
  const result = await client.query<{ index: string; definition: string; constraint: string | null }>(
    `SELECT i.indexrelid::regclass::text AS index, pg_get_indexdef(i.indexrelid) AS definition,
            (SELECT c.conname || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c
              WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid) AS constraint
       FROM pg_index i WHERE i.indrelid = $1::regclass ORDER BY 1`,
    [TABLE],
  );
  return result.rows;
}

beforeAll(async () => {
  client = await rawConnection();
  await client.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await client.query(`CREATE TABLE ${TABLE} (
    id integer PRIMARY KEY,
    day date NOT NULL,
    name text,
    prefix text,
    sessions integer NOT NULL,
    CONSTRAINT ${TABLE}_key UNIQUE NULLS NOT DISTINCT (day, name, prefix)
  )`);
  await client.query(`CREATE INDEX ${TABLE}_busy_idx ON ${TABLE} (day) WHERE sessions > 10`);
  await client.query(`CREATE INDEX ${TABLE}_lower_idx ON ${TABLE} (lower(name), day DESC)`);
});

afterAll(async () => {
  await client.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await client.end();
});

describe("indexes set aside for a full build", () => {
  it("are all dropped, and all made again as they were from the statements returned", async () => {
    const before = await indexesOfProbe();
    expect(before.map((row) => row.index)).toEqual([
      `${TABLE}_busy_idx`,
      `${TABLE}_key`,
      `${TABLE}_lower_idx`,
      `${TABLE}_pkey`,
    ]);
    expect(before.find((row) => row.index === `${TABLE}_key`)?.constraint).toBe(
      `${TABLE}_key UNIQUE NULLS NOT DISTINCT (day, name, prefix)`,
    );

    await client.query("BEGIN");
    try {
      const setAside = await client.query<{ statements: string[] }>(
        "SELECT set_aside_indexes($1::regclass) AS statements",
        [TABLE],
      );
      const statements = setAside.rows[0]?.statements ?? [];
      expect(statements).toHaveLength(4);
      expect(await indexesOfProbe()).toEqual([]);
      // Written without them: two rows the unique key would refuse are accepted, then one removed.
      await client.query(
        `INSERT INTO ${TABLE} VALUES (1, '2026-11-01', NULL, NULL, 12), (2, '2026-11-01', NULL, NULL, 3)`,
      );
      await client.query(`DELETE FROM ${TABLE} WHERE id = 2`);
      await client.query("SELECT restore_indexes($1::text[])", [statements]);
      expect(await indexesOfProbe()).toEqual(before);
      // The key is enforced again, NULLs alike.
      await expect(
        client.query(`INSERT INTO ${TABLE} VALUES (3, '2026-11-01', NULL, NULL, 1)`),
      ).rejects.toThrow(/duplicate key value violates unique constraint "set_aside_indexes_probe_key"/);
    } finally {
      await client.query("ROLLBACK");
    }
    expect(await indexesOfProbe()).toEqual(before);
  });

  it("roll back with the build: an error after the drops leaves the indexes in place", async () => {
    const before = await indexesOfProbe();
    await client.query("BEGIN");
    await client.query("SELECT set_aside_indexes($1::regclass)", [TABLE]);
    // Dropped inside the build's transaction, so the rollback below has something to undo.
    expect(await indexesOfProbe()).toEqual([]);
    await expect(client.query("SELECT 1 / 0")).rejects.toThrow(/division by zero/);
    await client.query("ROLLBACK");
    expect(await indexesOfProbe()).toEqual(before);
  });

  it("leave every table with the indexes its migrations made once a full build is done", async () => {
    // A scratch database: a full build empties every derived table, which the shared one must keep.
    const scratch = await createScratchDatabase("api_set_aside_indexes");
    const handle = connect(scratch.url, inject("relayProxy"));
    const indexes = sql`SELECT c.relname AS table, pg_get_indexdef(i.indexrelid) AS definition
        FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
       WHERE c.relnamespace = 'public'::regnamespace ORDER BY 1, 2`;
    try {
      await migrateDatabase(scratch.url);
      const migrated = (await handle.db.execute<{ table: string; definition: string }>(indexes)).rows;
      expect(migrated.filter((row) => row.table === "session_pair_rollups")).toHaveLength(1);
      const organization = await createOrganization(handle.db);
      const projectId = await createProject(handle.db, organization);
      const from = Date.UTC(2026, 8, 1);
      const traffic = generateTraffic({ projectId, seed: 7, sessions: 20, from, to: from + 86_400_000 });
      await insertEvents(handle.db, traffic as EventInput[], { refresh: false });
      await refreshUntilFolded(drizzleStatements(handle.db), ["rollups"]);
      const pairs = await handle.db.execute<{ n: string }>(
        sql`SELECT count(*)::text AS n FROM session_pair_rollups`,
      );
      expect(Number(pairs.rows[0]?.n)).toBeGreaterThan(0);
      expect((await handle.db.execute<{ table: string; definition: string }>(indexes)).rows).toEqual(
        migrated,
      );
    } finally {
      await handle.close();
      await scratch.drop();
    }
  });
});
