import type { TestProject } from "vitest/node";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { startRelay } from "../../scripts/local/relay";
import { createScratchDatabase } from "./node/scratch-database";

/**
 * Runs once in Node before both tiers: a fresh database on the machine's Postgres (the embedded
 * one when none is reachable), migrated, plus the relay the Neon driver needs to reach it.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const database = await createScratchDatabase("api_test");
  await migrateDatabase(database.url);
  // The embedded database has one session for all connections: nothing to pool.
  const relay = await startRelay(0, { pooling: !database.embedded });
  project.provide("databaseUrl", database.url);
  project.provide("relayProxy", relay.proxy);
  project.provide("embeddedDatabase", database.embedded);
  return async () => {
    await relay.close();
    await database.drop();
  };
}
