import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createTenant, credentialHeaders, insertEvents, type Tenant } from "../support/factories";
import { call, testDatabase } from "../support/worker/http";

/**
 * Every answer carries `Server-Timing` (database time and queries, cache, total) and leaves one
 * structured JSON log line (request id, route pattern, project, status, duration, database time,
 * cache status), never the URL's query string.
 */

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
  await insertEvents(
    database.db,
    [{ projectId: "", sessionId: "s1", createdAt: new Date("2026-05-01T10:00:00Z") }].map((event) => ({
      ...event,
      projectId: tenant.projectId,
    })),
  );
});
afterAll(() => database.close());
afterEach(() => vi.restoreAllMocks());

const SERVER_TIMING =
  /^db;dur=(\d+);desc="(\d+) quer(?:y|ies)"(?:, cache;desc="(hit|miss)")?, total;dur=(\d+)$/;

/** The request's log line, found by its request id among what console.log was given. */
function logLineOf(log: { mock: { calls: unknown[][] } }, requestId: string | null): Record<string, unknown> {
  const lines = log.mock.calls
    .map((args) => String(args[0]))
    .filter((text) => text.startsWith("{"))
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .filter((line) => line.event === "request" && line.requestId === requestId);
  expect(lines).toHaveLength(1);
  return lines[0] as Record<string, unknown>;
}

describe("request observability", () => {
  it("a database answer states its database time, queries and cache status, then its cached copy a hit", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const path = `/insights/${tenant.projectId}/metrics?startDate=2026-05-01&endDate=2026-05-01&timezone=UTC`;
    const first = await call(path, {
      headers: { ...credentialHeaders(tenant.read), "Cache-Control": "no-cache" },
    });
    expect(first.status).toBe(200);
    const timing = SERVER_TIMING.exec(first.headers.get("server-timing") ?? "");
    expect(timing).not.toBeNull();
    const [, databaseMs, queries, cache, totalMs] = timing as RegExpExecArray;
    expect(Number(queries)).toBeGreaterThan(0);
    expect(cache).toBe("miss");
    expect(Number(totalMs)).toBeGreaterThanOrEqual(Number(databaseMs));
    expect(logLineOf(log, first.headers.get("x-request-id"))).toEqual({
      event: "request",
      requestId: first.headers.get("x-request-id"),
      method: "GET",
      route: "/insights/:projectId/metrics",
      projectId: tenant.projectId,
      status: 200,
      durationMs: Number(totalMs),
      databaseMs: Number(databaseMs),
      queries: Number(queries),
      cache: first.headers.get("cache-status"),
    });

    const again = await call(path, { headers: credentialHeaders(tenant.read) });
    expect(again.headers.get("server-timing")).toMatch(/cache;desc="hit"/);
    expect(logLineOf(log, again.headers.get("x-request-id"))).toMatchObject({
      status: 200,
      cache: expect.stringMatching(/; hit/),
    });
  });

  it("an answer without the database or a project states 0 queries and no project", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const response = await call("/no-such-route?secret=abc123");
    expect(response.status).toBe(404);
    expect(response.headers.get("server-timing")).toMatch(/^db;dur=0;desc="0 queries", total;dur=\d+$/);
    const line = logLineOf(log, response.headers.get("x-request-id"));
    expect(line).toMatchObject({ event: "request", method: "GET", status: 404, queries: 0 });
    expect(line.projectId).toBeUndefined();
    expect(JSON.stringify(line)).not.toContain("abc123");
  });

  it("a refused request is logged with its status and without the query string", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const response = await call(`/insights/${tenant.projectId}/metrics?filters=leaked-value`);
    expect(response.status).toBe(401);
    expect(response.headers.get("server-timing")).toMatch(SERVER_TIMING);
    const line = logLineOf(log, response.headers.get("x-request-id"));
    // The pattern of what answered: the authentication middleware of the insights group.
    expect(line).toMatchObject({ status: 401, route: "/insights/:projectId/*" });
    expect(JSON.stringify(line)).not.toContain("leaked-value");
  });

  it("a streamed export logs its line when the body ends: rows and bytes sent, how it ended, all its queries", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const response = await call<string>(`/export/events?format=csv&startDate=2026-05-01&endDate=2026-05-01`, {
      headers: credentialHeaders(tenant.read),
    });
    expect(response.status).toBe(200);
    const body = response.body;
    // A header row and the tenant's one event.
    expect(body.split("\n").filter((line) => line !== "")).toHaveLength(2);
    const requestId = response.headers.get("x-request-id");
    const line = await vi.waitFor(() => logLineOf(log, requestId));
    expect(line).toMatchObject({
      event: "request",
      route: "/export/events",
      projectId: tenant.projectId,
      status: 200,
      rows: 1,
      bytes: new TextEncoder().encode(body).byteLength,
      stream: "complete",
    });
    // The whole stream took at least as long as its headers, and counted every query.
    expect(Number(line.durationMs)).toBeGreaterThanOrEqual(Number(line.headersMs));
    expect(Number(line.queries)).toBeGreaterThan(0);
  });
});
