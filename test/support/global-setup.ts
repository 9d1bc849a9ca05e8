import type { TestProject } from "vitest/node";
import { buildAssets } from "../../scripts/assets/build";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { createScratchDatabase } from "../../scripts/db/scratch-database";
import { startRelay } from "../../scripts/local/relay";

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
