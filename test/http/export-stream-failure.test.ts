import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import worker from "../../src/index";
import {
  connect,
  createClient,
  createOrganization,
  createProject,
  credentialHeaders,
  insertEvents,
  type TestClient,
} from "../support/factories";
import { parseCsv } from "../support/worker/export-events";
import { testDatabase } from "../support/worker/http";

/**
 * A streamed export whose database goes away in the middle: the Worker reads from a database of
 * its own (faultsDatabaseUrl), which the test disconnects (every session terminated, new ones
 * refused) once the first batch has arrived. The client must be able to tell the export is
 * incomplete, from its last record, and resume from the id that record names.
 */

const EVENTS = 16_000;
/** Rows per query of a stream (src/routes/export/events/shaping.ts): the cut falls after the first. */
const BATCH = 5_000;

const faultsUrl = inject("faultsDatabaseUrl");
const faultsName = new URL(faultsUrl).pathname.slice(1);
const admin = testDatabase();
const faults = connect(faultsUrl, env.NEON_WS_PROXY);
const withFaults = { ...env, DATABASE_URL: faultsUrl, DATABASE_REPLICA_URL: "" };

let projectId: string;
let client: TestClient;
let allIds: string[];

beforeAll(async () => {
  if (inject("embeddedDatabase")) return;
  const organizationId = await createOrganization(faults.db);
  projectId = await createProject(faults.db, organizationId);
  client = await createClient(faults.db, { type: "read", organizationId, projectId });
  const at = Date.UTC(2026, 5, 1);
  await insertEvents(
    faults.db,
    Array.from({ length: EVENTS }, (_, i) => ({
      projectId,
      sessionId: `s${i % 400}`,
      createdAt: new Date(at + i * 1_000),
      path: `/page-${i % 7}`,
    })),
    { refresh: false },
  );
  const rows = await faults.db.execute<{ id: string }>(
    sql`select id from events where project_id = ${projectId} order by created_at desc, id desc`,
  );
  allIds = rows.rows.map((row) => row.id);
});

afterAll(async () => {
  await admin.close();
  await faults.close();
});

async function cutOff(): Promise<void> {
  await admin.db.execute(sql.raw(`ALTER DATABASE ${faultsName} ALLOW_CONNECTIONS false`));
  await admin.db.execute(
    sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${faultsName}`,
  );
}

async function reconnect(): Promise<void> {
  await admin.db.execute(sql.raw(`ALTER DATABASE ${faultsName} ALLOW_CONNECTIONS true`));
}

/** The whole body as the client receives it, the database cut off once `cutAfter` bytes arrived. */
async function streamWithCut(query: string, cutAfter: (text: string) => boolean) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`http://api.test/export/events?projectId=${projectId}&${query}`, {
      headers: credentialHeaders(client),
    }),
    withFaults,
    ctx,
  );
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  let cut = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!cut && cutAfter(text)) {
        cut = true;
        await cutOff();
      }
    }
  } catch {
    // The body may abort after its error record (where the transport shows it) or end cleanly;
    // the error record is what a client can rely on, and what the tests below read.
  } finally {
    await reconnect();
  }
  await waitOnExecutionContext(ctx);
  expect(cut, "the database was cut off mid-stream").toBe(true);
  return { text };
}

async function resumeIds(after: string): Promise<string[]> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`http://api.test/export/events?projectId=${projectId}&format=ndjson&after=${after}`, {
      headers: credentialHeaders(client),
    }),
    withFaults,
    ctx,
  );
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  expect(response.status).toBe(200);
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);
}

describe.skipIf(inject("embeddedDatabase"))("a streamed export whose database goes away", () => {
  it("NDJSON ends with an error line naming the last complete event; resuming there gives the rest", async () => {
    const { text } = await streamWithCut("format=ndjson", (received) => received.split("\n").length > BATCH);
    const lines = text.split("\n");
    expect(lines.at(-1), "the body ends with a newline").toBe("");
    const records = lines.slice(0, -1).map((line) => JSON.parse(line) as Record<string, unknown>);
    const last = records.at(-1) as { error?: Record<string, unknown> };
    const events = records.slice(0, -1) as Array<{ id: string }>;
    expect(events.length).toBeGreaterThanOrEqual(BATCH);
    expect(events.length).toBeLessThan(EVENTS);
    expect(events.map((event) => event.id)).toEqual(allIds.slice(0, events.length));
    expect(last.error).toMatchObject({
      code: "DATABASE_UNAVAILABLE",
      status: 503,
      after: events.at(-1)?.id,
    });
    expect(typeof last.error?.cursor).toBe("string");
    expect(typeof last.error?.requestId).toBe("string");
    expect(JSON.stringify(last)).not.toMatch(/select|postgres|terminat|api_faults/i);
    const rest = await resumeIds(String(last.error?.after));
    expect([...events.map((event) => event.id), ...rest]).toEqual(allIds);
  });

  it("CSV ends with a #error row naming the last complete event; resuming there gives the rest", async () => {
    const { text } = await streamWithCut(
      "format=csv",
      (received) => received.split("\r\n").length > BATCH + 1,
    );
    const [header, ...rows] = parseCsv(text);
    const idColumn = header?.indexOf("id") ?? -1;
    const last = rows.at(-1) ?? [];
    const events = rows.slice(0, -1);
    expect(events.length).toBeGreaterThanOrEqual(BATCH);
    expect(events.length).toBeLessThan(EVENTS);
    expect(events.map((row) => row[idColumn])).toEqual(allIds.slice(0, events.length));
    const [marker, code, status, message, requestId, after, cursor] = last;
    expect([marker, code, status]).toEqual(["#error", "DATABASE_UNAVAILABLE", "503"]);
    expect(message).toContain("Resume with after");
    expect(requestId).toBeTruthy();
    expect(after).toBe(events.at(-1)?.[idColumn]);
    expect(cursor).toBeTruthy();
    const rest = await resumeIds(String(after));
    expect([...events.map((row) => String(row[idColumn])), ...rest]).toEqual(allIds);
  });

  it("a complete stream has no error record", async () => {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`http://api.test/export/events?projectId=${projectId}&format=ndjson`, {
        headers: credentialHeaders(client),
      }),
      withFaults,
      ctx,
    );
    const lines = (await response.text()).split("\n").filter(Boolean);
    await waitOnExecutionContext(ctx);
    expect(lines).toHaveLength(EVENTS);
    expect(lines.some((line) => line.startsWith('{"error"'))).toBe(false);
  });
});
