import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { clients, organizations, projects, sessions } from "../../src/db/schema";
import worker from "../../src/index";
import {
  connect,
  createClient,
  createOrganization,
  createProject,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type TestClient,
} from "../support/factories";
import { testDatabase } from "../support/worker/http";

/**
 * With DATABASE_REPLICA_URL set, every API request reads the replica and the cron refresh writes
 * the primary (DATABASE_URL). The replica here is a second database kept in step by copying the
 * rows a test needs, with different events on each side, so an answer shows which one it read.
 */

const primary = testDatabase();
const replica = connect(inject("replicaDatabaseUrl"), env.NEON_WS_PROXY);
afterAll(async () => {
  await primary.close();
  await replica.close();
});

const withReplica = { ...env, DATABASE_REPLICA_URL: inject("replicaDatabaseUrl") };
const DAY = 86_400_000;
const FROM = Date.UTC(2026, 4, 4);

let projectId: string;
let read: TestClient;

/** One-page sessions on the window's first day: `count` of them, ids prefixed by the side. */
function visits(side: string, count: number): EventInput[] {
  return Array.from({ length: count }, (_, i) => ({
    projectId,
    sessionId: `${side}-${i}`,
    createdAt: new Date(FROM + (i + 1) * 60_000),
  }));
}

beforeAll(async () => {
  const organizationId = await createOrganization(primary.db);
  projectId = await createProject(primary.db, organizationId);
  read = await createClient(primary.db, { type: "read", organizationId, projectId });
  // Replicate the account rows as they are.
  await replica.db
    .insert(organizations)
    .values(await primary.db.select().from(organizations).where(eq(organizations.id, organizationId)));
  await replica.db
    .insert(projects)
    .values(await primary.db.select().from(projects).where(eq(projects.id, projectId)));
  await replica.db
    .insert(clients)
    .values(await primary.db.select().from(clients).where(eq(clients.id, read.id)));
  await insertEvents(primary.db, visits("primary", 2));
  await insertEvents(replica.db, visits("replica", 3));
});

async function totalSessions(bindings: typeof env): Promise<unknown> {
  const ctx = createExecutionContext();
  const query = `startDate=${new Date(FROM).toISOString()}&endDate=${new Date(FROM + DAY).toISOString()}`;
  const response = await worker.fetch(
    new Request(`http://api.test/insights/${projectId}/metrics?${query}`, {
      headers: { ...credentialHeaders(read), "cache-control": "no-cache" },
    }),
    bindings,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { metrics: { total_sessions: number } };
  return body.metrics.total_sessions;
}

describe("read replica", () => {
  it("answers API requests from DATABASE_REPLICA_URL when it is set, from DATABASE_URL otherwise", async () => {
    expect(await totalSessions(withReplica)).toBe(3);
    expect(await totalSessions(env)).toBe(2);
    expect(await totalSessions({ ...env, DATABASE_REPLICA_URL: " " })).toBe(2);
  });

  it("runs the cron refresh on the primary only", async () => {
    await insertEvents(primary.db, [{ projectId, sessionId: "primary-late", createdAt: new Date(FROM) }], {
      refresh: false,
    });
    await insertEvents(replica.db, [{ projectId, sessionId: "replica-late", createdAt: new Date(FROM) }], {
      refresh: false,
    });
    const ctx = createExecutionContext();
    await worker.scheduled(
      createScheduledController({ cron: "* * * * *", scheduledTime: FROM }),
      withReplica,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const ids = async (db: typeof primary.db) =>
      (await db.select({ id: sessions.id }).from(sessions).where(eq(sessions.projectId, projectId)))
        .map((row) => row.id)
        .sort();
    expect(await ids(primary.db)).toEqual(["primary-0", "primary-1", "primary-late"]);
    expect(await ids(replica.db)).toEqual(["replica-0", "replica-1", "replica-2"]);
  });
});
