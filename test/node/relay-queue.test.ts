import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Relay, startRelay } from "../../scripts/local/relay";
import { type DatabaseHandle, openDatabase } from "../../src/db/client";

/**
 * The local relay caps the Postgres sessions Worker connections hold and queues the rest in
 * arrival order, as Neon's pooler does: a burst waits instead of failing with "too many clients".
 */

const CAP = 2;
const CLIENTS = 6;
let relay: Relay;
const handles: DatabaseHandle[] = [];

beforeAll(async () => {
  relay = await startRelay(0, { maxSessions: CAP });
});
afterAll(async () => {
  await Promise.all(handles.map((handle) => handle.close()));
  await relay.close();
});

function open(proxy: string): DatabaseHandle {
  const handle = openDatabase({ DATABASE_URL: inject("databaseUrl"), NEON_WS_PROXY: proxy });
  handles.push(handle);
  return handle;
}

describe.skipIf(inject("embeddedDatabase"))("the relay's session cap", () => {
  it("lets at most its cap of connections hold sessions; the rest wait their turn, none fails", async () => {
    const marker = `relay_cap_${crypto.randomUUID().replace(/-/g, "")}`;
    // A watcher straight on Postgres, outside every relay (the tests' own one queues too).
    const watcher = new pg.Client({ connectionString: inject("databaseUrl") });
    await watcher.connect();
    const running = async () => {
      const result = await watcher.query<{ count: number }>(
        "select count(*)::integer as count from pg_stat_activity where query like $1 and state = 'active' and pid <> pg_backend_pid()",
        [`%${marker}%`],
      );
      return Number(result.rows[0]?.count ?? 0);
    };
    // Each like a request: one query, then its connection ends (which frees its slot).
    const sleepers = Array.from({ length: CLIENTS }, async (_, i) => {
      const handle = open(relay.proxy);
      const result = await handle.db.execute<{ client: number }>(
        sql.raw(`select pg_sleep(0.5), ${i} as client /* ${marker} */`),
      );
      await handle.close();
      return Number(result.rows[0]?.client);
    });
    let peak = 0;
    let settled = false;
    const all = Promise.all(sleepers).finally(() => {
      settled = true;
    });
    while (!settled) {
      peak = Math.max(peak, await running());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await watcher.end();
    expect((await all).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(CAP);
  });
});
