import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTenant,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type Tenant,
} from "../support/factories";
import { referenceSessionRows } from "../support/listing-reference";
import type { RawEvent } from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { call, expectProblem, queryString, testDatabase, walkPages } from "../support/worker/http";

/**
 * GET /insights/{projectId}/sessions (contract A3): one row per session, its shape and order
 * against the reference over the raw events; keyset pages; every bad input a 400.
 */

const database = testDatabase();
let tenant: Tenant;
let traffic: RawEvent[];
const utc = (text: string) => Date.parse(text);
const WINDOW = { startDate: "2026-08-01", endDate: "2026-08-07", timezone: "UTC" };
const scope = () => ({
  projectId: tenant.projectId,
  start: utc("2026-08-01T00:00:00Z"),
  end: utc("2026-08-08T00:00:00Z"),
});

beforeAll(async () => {
  tenant = await createTenant(database.db);
  traffic = generateTraffic({
    projectId: tenant.projectId,
    seed: 95,
    sessions: 140,
    from: utc("2026-07-30T00:00:00Z"),
    to: utc("2026-08-09T00:00:00Z"),
  });
  await insertEvents(database.db, traffic as EventInput[]);
});
afterAll(() => database.close());

const list = <T = unknown[]>(params: Record<string, string>) =>
  call<T>(`/insights/${tenant.projectId}/sessions?${queryString(params)}`, {
    headers: credentialHeaders(tenant.read),
  });

/** Every page of a listing, following X-Next-Cursor. */
const walk = (params: Record<string, string>) =>
  walkPages((cursor) => list<unknown[]>({ ...params, ...(cursor ? { cursor } : {}) }));

describe("/sessions", () => {
  it("lists the window's sessions newest first, 20 by default, one row each", async () => {
    const response = await list(WINDOW);
    expect(response.status).toBe(200);
    const expected = referenceSessionRows(traffic, scope());
    expect(expected.length).toBeGreaterThan(60);
    expect(response.body).toEqual(expected.slice(0, 20));
    expect(response.headers.get("x-window-end")).toBe("2026-08-07T23:59:59.999Z");
  });

  it("walks every session once by cursor", async () => {
    expect(await walk({ ...WINDOW, limit: "13" })).toEqual(referenceSessionRows(traffic, scope()));
  });

  it.each([
    ["an attribute", { country: "SE" }, [{ name: "country", operator: "is", value: ["SE"] }]],
    [
      "two attributes",
      { device: "mobile", browser: "Safari" },
      [
        { name: "device", operator: "is", value: ["mobile"] },
        { name: "browser", operator: "is", value: ["Safari"] },
      ],
    ],
    [
      "a session-scoped event filter",
      { filters: '[{"name":"path","operator":"is","value":["/pricing"]}]' },
      [{ name: "path", operator: "is", value: ["/pricing"] }],
    ],
  ])("selects by %s", async (_label, params, filters) => {
    const expected = referenceSessionRows(traffic, { ...scope(), filters });
    expect(expected.length).toBeGreaterThan(0);
    expect(await walk({ ...WINDOW, limit: "50", ...params })).toEqual(expected);
  });

  it("takes profileId as the session's visitor", async () => {
    const visitor = referenceSessionRows(traffic, scope())[2]?.profile_id ?? "";
    const expected = referenceSessionRows(traffic, {
      ...scope(),
      filters: [{ name: "profile_id", operator: "is", value: [visitor] }],
    });
    expect(expected.length).toBeGreaterThan(0);
    expect(await walk({ ...WINDOW, profileId: visitor })).toEqual(expected);
  });

  it("carries its first event's latitude and longitude", async () => {
    const at = utc("2026-09-01T10:00:00Z");
    await insertEvents(database.db, [
      {
        projectId: tenant.projectId,
        sessionId: "geo",
        createdAt: new Date(at),
        latitude: 59.91,
        longitude: 10.75,
      },
      {
        projectId: tenant.projectId,
        sessionId: "geo",
        createdAt: new Date(at + 60_000),
        latitude: 60.39,
        longitude: 5.32,
      },
    ]);
    const response = await list<Array<Record<string, unknown>>>({
      startDate: "2026-09-01",
      endDate: "2026-09-01",
    });
    expect(response.body).toHaveLength(1);
    expect(response.body[0]).toMatchObject({ id: "geo", latitude: 59.91, longitude: 10.75, event_count: 2 });
  });

  it.each([
    ["limit=0", { limit: "0" }, "limit"],
    ["limit=101", { limit: "101" }, "limit"],
    ["a forged cursor", { cursor: "abc.def" }, "cursor"],
    ["an unknown timezone", { timezone: "Mars/Base" }, "timezone"],
  ])("%s is a 400 naming it", async (_label, params, path) => {
    expectProblem(await list(params), 400, "VALIDATION_FAILED", path);
  });

  it("a cursor of /events or of another query is a 400", async () => {
    const first = await list({ ...WINDOW, limit: "5" });
    const cursor = first.headers.get("x-next-cursor") ?? "";
    expectProblem(
      await list({ ...WINDOW, country: "NO", limit: "5", cursor }),
      400,
      "VALIDATION_FAILED",
      "cursor",
    );
    const events = await call(
      `/insights/${tenant.projectId}/events?${queryString({ ...WINDOW, limit: "5" })}`,
      {
        headers: credentialHeaders(tenant.read),
      },
    );
    const eventCursor = events.headers.get("x-next-cursor") ?? "";
    expectProblem(
      await list({ ...WINDOW, limit: "5", cursor: eventCursor }),
      400,
      "VALIDATION_FAILED",
      "cursor",
    );
  });
});
