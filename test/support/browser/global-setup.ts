import { mkdirSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startBenchServer } from "../../../scripts/bench/server";
import { migrateDatabase } from "../../../scripts/db/apply-migrations";
import { createScratchDatabase } from "../../../scripts/db/scratch-database";
import { seedDatabase } from "../../../scripts/seed/loader";

/**
 * The end-to-end tier's one server: a database of its own with the demo fixtures and 30,000 seeded
 * events over 60 days, served by `wrangler dev` (with the relay) as `npm run dev` serves it. The
 * dashboard test and the README examples test both talk to it.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const database = await createScratchDatabase("e2e");
  await migrateDatabase(database.url);
  // 60 days, so that the dashboard's default 30 days have a previous period to compare with.
  await seedDatabase(database.url, { events: 30_000, days: 60, seed: 11, reset: false });
  mkdirSync(".wrangler", { recursive: true });
  const server = await startBenchServer(database.url, ".wrangler/e2e-wrangler.log");
  project.provide("e2eBase", server.base);
  return async () => {
    await server.stop();
    await database.drop();
  };
}
