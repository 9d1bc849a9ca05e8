import pg from "pg";
import { inject } from "vitest";
import { connect } from "../factories";

/** The test database through the Neon driver and the relay, as the Worker reaches it. */
export function testDatabase() {
  return connect(inject("databaseUrl"), inject("relayProxy"));
}

/** A plain `pg` connection, for tests that need explicit transaction control. */
export async function rawConnection(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: inject("databaseUrl") });
  await client.connect();
  return client;
}
