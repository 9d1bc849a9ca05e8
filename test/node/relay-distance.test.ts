import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Relay, startRelay } from "../../scripts/local/relay";
import { type DatabaseHandle, openDatabase } from "../../src/db/client";

/**
 * The relay's simulated distance (`npm run bench -- --db-rtt`): every message waits half a round
 * trip each way and a new connection three, and what passes through arrives whole and in order.
 * The waits are lower bounds the relay guarantees, so asserting them cannot flake on a slow machine.
 */

const ROUND_TRIP_MS = 60;
/** Timers may fire a millisecond early against performance.now(). */
const SLACK_MS = 5;
let relay: Relay;
const handles: DatabaseHandle[] = [];

beforeAll(async () => {
  relay = await startRelay(0, { roundTripMs: ROUND_TRIP_MS });
});
afterAll(async () => {
  await Promise.all(handles.map((handle) => handle.close()));
  await relay.close();
});

function open(): DatabaseHandle {
  const handle = openDatabase({ DATABASE_URL: inject("databaseUrl"), NEON_WS_PROXY: relay.proxy });
  handles.push(handle);
  return handle;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe.skipIf(inject("embeddedDatabase"))("the relay's simulated distance", () => {
  it("costs a new connection its round trips and each statement one, and loses nothing", async () => {
    const { db } = open();
    const rows = () =>
      db.execute<{ n: number; label: string }>(
        sql`select n, 'row ' || n as label from generate_series(1, 20000) as n order by n`,
      );
    // Three for the connection, one for the login, one for the session's settings, one for the statement.
    const first = await timed(rows);
    expect(first.ms).toBeGreaterThanOrEqual(6 * ROUND_TRIP_MS - SLACK_MS);
    // A result of many messages, in order and whole.
    expect(first.value.rows).toHaveLength(20000);
    expect(first.value.rows.every((row, i) => Number(row.n) === i + 1 && row.label === `row ${i + 1}`)).toBe(
      true,
    );
    const second = await timed(() =>
      db.execute<{ total: string }>(sql`select sum(n)::text as total from generate_series(1, 100) as n`),
    );
    expect(second.ms).toBeGreaterThanOrEqual(ROUND_TRIP_MS - SLACK_MS);
    expect(second.value.rows).toEqual([{ total: "5050" }]);
  });

  it("brings a statement's error back, and the connection goes on", async () => {
    const { db } = open();
    // Drizzle wraps the driver's error; Postgres' own is its cause (22012: division_by_zero).
    await expect(db.execute(sql`select 1 / (select 0) as broken`)).rejects.toMatchObject({
      cause: { code: "22012" },
    });
    const after = await db.execute<{ ok: number }>(sql`select 1 as ok`);
    expect(after.rows).toEqual([{ ok: 1 }]);
  });
});
