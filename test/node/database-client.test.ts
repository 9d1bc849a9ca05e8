import { sql } from "drizzle-orm";
import { afterAll, describe, expect, inject, it } from "vitest";
import { connectionsOpen, type DatabaseHandle, openDatabase } from "../../src/db/client";
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

describe("connections opened ahead of statements side by side", () => {
  it("open beside the statement just started, counting its connection, and are then used", async () => {
    const { db } = open();
    const answers = await Promise.all([
      db.execute<{ one: number }>(sql`select 1 as one`),
      connectionsOpen(db, 2),
    ]);
    expect(answers[0].rows).toEqual([{ one: 1 }]);
    // One for the statement, one opened ahead: not a third for the statement's own.
    expect(db.$client.totalCount).toBe(2);
    const pids = await Promise.all(
      [0, 1].map(() => db.execute<{ pid: number }>(sql`select pg_backend_pid() as pid, pg_sleep(0.05)`)),
    );
    expect(new Set(pids.map((result) => result.rows[0]?.pid)).size).toBe(2);
    expect(db.$client.totalCount).toBe(2);
  });

  it("open none that the pool already holds, and leave one to the caller's own statement", async () => {
    const { db } = open();
    // No statement beside the calls here: each opens one fewer than it names.
    await connectionsOpen(db, 3);
    expect(db.$client.totalCount).toBe(2);
    await connectionsOpen(db, 2);
    await connectionsOpen(db, 1);
    expect(db.$client.totalCount).toBe(2);
    await connectionsOpen(db, 4);
    expect(db.$client.totalCount).toBe(3);
  });
});

describe("the cron refresh", () => {
  it("runs without the statement timeout a session may have been left with", async () => {
    // A session timeout far shorter than any refresh, as an API client behind a transaction-mode
    // pooler could leave on the server connection the refresh then gets.
    // 50 ms: far below any refresh (an empty one takes about 300 ms), well above a SET or BEGIN.
    const handle = open(50);
    expect(await setting(handle, "statement_timeout")).toBe("50ms");
    await expect(
      handle.db.execute(sql`select pg_sleep(0.2)`),
      "the session timeout is in force",
    ).rejects.toThrow();
    expect(await refreshDerived(handle.db)).toBeGreaterThanOrEqual(0);
  });
});

describe("API queries", () => {
  it("are retried once on a fresh connection when their session dies under them", async () => {
    const handle = open(0);
    const admin = open(0);
    const marker = `retry_${crypto.randomUUID().replace(/-/g, "")}`;
    // Started now: a drizzle query runs when it is awaited or `then` is called.
    const sleeping = handle.db
      .execute<{ state: string }>(sql.raw(`select pg_sleep(0.4), 'finished' as state /* ${marker} */`))
      .then((result) => result);
    // The session running it, once it has started.
    let pid: number | undefined;
    for (let attempt = 0; attempt < 100 && pid === undefined; attempt++) {
      const found = await admin.db.execute<{ pid: number }>(
        sql`select pid from pg_stat_activity where query like ${`%${marker}%`} and pid <> pg_backend_pid()`,
      );
      pid = found.rows[0]?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(pid, "the query's session").toBeDefined();
    await admin.db.execute(sql`select pg_terminate_backend(${pid}::integer)`);
    const result = await sleeping;
    expect(result.rows[0]?.state).toBe("finished");
  });
});
