import pg from "pg";
import type { TestProject } from "vitest/node";
import { buildAssets } from "../../scripts/assets/build";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { createScratchDatabase } from "../../scripts/db/scratch-database";
import { startRelay } from "../../scripts/local/relay";

/**
 * The session numbers per block of a day's strings in the tests (src/db/routines/day_block_bits.sql):
 * a test day holds tens to hundreds of sessions, so at 64 its strings span several blocks, as a
 * day of more than 524,288 sessions does in production, and every query and refresh of the strings
 * runs across blocks.
 */
const TEST_DAY_BLOCK_BITS = 64;

/**
 * The member rows per statement of the chart pair rows' refresh in the tests
 * (src/db/routines/pair_member_batch_rows.sql): a test's days hold a few to tens of rows each, so
 * at 100 a refresh of many days counts them in several batches, as a first build of large days
 * does in production.
 */
const TEST_PAIR_MEMBER_BATCH_ROWS = 100;

/**
 * The numbered events per row of event_day_members in the tests (src/db/routines/member_page_events.sql):
 * at 4 a test day's members span many rows, and a refresh appends to a half-full one.
 */
const TEST_MEMBER_PAGE_EVENTS = 4;

/** The small sizes above, in place of the production ones the migrations defined. */
const TEST_SIZES = [
  { routine: "day_block_bits", type: "integer", value: TEST_DAY_BLOCK_BITS },
  { routine: "pair_member_batch_rows", type: "bigint", value: TEST_PAIR_MEMBER_BATCH_ROWS },
  { routine: "member_page_events", type: "integer", value: TEST_MEMBER_PAGE_EVENTS },
] as const;

async function useTestSizes(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    for (const { routine, type, value } of TEST_SIZES) {
      await client.query(
        `CREATE OR REPLACE FUNCTION ${routine}() RETURNS ${type} LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT ${value}::${type}'`,
      );
    }
  } finally {
    await client.end();
  }
}

/**
 * Runs once in Node before both tiers: a fresh database on the machine's Postgres (the embedded
 * one when none is reachable), migrated, a second one for the read-replica test, a third that a
 * test cuts off mid-stream, plus the relay
 * the Neon driver needs to reach them.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The Worker's static assets (wrangler.toml `[assets]`): workerd serves them in the http tier.
  await buildAssets();
  const database = await createScratchDatabase("api_test");
  await migrateDatabase(database.url);
  await useTestSizes(database.url);
  // A second database standing in for a read replica (test/http/read-replica.test.ts).
  const replica = await createScratchDatabase("api_replica");
  await migrateDatabase(replica.url);
  // A third one that a test cuts off mid-request (test/http/export-stream-failure.test.ts).
  const faults = await createScratchDatabase("api_faults");
  await migrateDatabase(faults.url);
  // The embedded database has one session for all connections: nothing to pool.
  const relay = await startRelay(0, { pooling: !database.embedded });
  project.provide("databaseUrl", database.url);
  project.provide("replicaDatabaseUrl", replica.url);
  project.provide("faultsDatabaseUrl", faults.url);
  project.provide("relayProxy", relay.proxy);
  project.provide("embeddedDatabase", database.embedded);
  return async () => {
    await relay.close();
    await database.drop();
    await replica.drop();
    await faults.drop();
  };
}
