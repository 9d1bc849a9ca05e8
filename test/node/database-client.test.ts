import { sql } from "drizzle-orm";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../src/db/client";
import { refreshDerived } from "../../src/queries/derived";

/** The session settings every API connection gets, through the Neon driver and the relay. */

const handles: DatabaseHandle[] = [];
afterAll(() => Promise.all(handles.map((handle) => handle.close())));

function open(statementTimeoutMs?: number): DatabaseHandle {
  const handle = openDatabase(
    { DATABASE_URL: inject("databaseUrl"), NEON_WS_PROXY: inject("relayProxy") },
    { statementTimeoutMs },
  );
  handles.push(handle);
  return handle;
}

async function setting(handle: DatabaseHandle, name: "jit" | "statement_timeout"): Promise<string> {
  const result = await handle.db.execute<{ value: string }>(sql`select current_setting(${name}) as value`);
  return String(result.rows[0]?.value);
}

describe("API connections", () => {
  it("run with the statement timeout and without JIT compilation", async () => {
    const handle = open(1234);
    expect(await setting(handle, "statement_timeout")).toBe("1234ms");
    expect(await setting(handle, "jit")).toBe("off");
  });

  it("without a timeout keep the server's default and still turn JIT off", async () => {
    const handle = open();
    expect(await setting(handle, "statement_timeout")).toBe("0");
    expect(await setting(handle, "jit")).toBe("off");
  });
});

describe("the cron refresh", () => {
  it("runs without the statement timeout a session may have been left with", async () => {
    // A session timeout far shorter than any refresh, as an API client behind a transaction-mode
    // pooler could leave on the server connection the refresh then gets.
    const handle = open(5);
    expect(await setting(handle, "statement_timeout")).toBe("5ms");
    await expect(
      handle.db.execute(sql`select pg_sleep(0.05)`),
      "the session timeout is in force",
    ).rejects.toThrow();
    expect(await refreshDerived(handle.db)).toBeGreaterThanOrEqual(0);
  });
});
