import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { profiles } from "../../src/db/schema";
import {
  createTenant,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type Tenant,
} from "../support/factories";
import {
  eventRow,
  type ListedEvent,
  referenceEventRows,
  referenceSessionRows,
} from "../support/listing-reference";
import {
  type ProfileRecord,
  type ProfileSelection,
  profileRow,
  referenceProfileMetrics,
  referenceProfileRows,
} from "../support/profile-reference";
import { generateTraffic } from "../support/traffic";
import { call, expectProblem, queryString, testDatabase, walkPages } from "../support/worker/http";

/**
 * GET /insights/{projectId}/profiles, /profiles/{id}, /profiles/{id}/sessions and
 * /profiles/{id}/metrics (contract A3): rows, order and figures against the reference over the raw
 * events and stored records; keyset pages; 404 for an id no event carries; every bad input a 400.
 */

const database = testDatabase();
let tenant: Tenant;
let traffic: ListedEvent[];
const utc = (text: string) => Date.parse(text);
const DAY = 86_400_000;
const WINDOW = { startDate: "2026-05-05", endDate: "2026-05-09", timezone: "UTC" };
const window = { start: utc("2026-05-05T00:00:00Z"), end: utc("2026-05-10T00:00:00Z") };
const RECORDS: ProfileRecord[] = [
  {
    id: "user-0",
    firstName: "Ingrid",
    lastName: "Hansen",
    email: "Ingrid.Hansen@example.com",
    properties: { plan: "pro" },
  },
  { id: "user-3", firstName: "Ola", lastName: "Nordmann", email: "ola@example.no" },
  { id: "user-6", firstName: "Kari", lastName: null, email: null, avatar: "https://example.com/k.png" },
];

beforeAll(async () => {
  tenant = await createTenant(database.db);
  traffic = generateTraffic({
    projectId: tenant.projectId,
    seed: 123,
    sessions: 150,
    from: utc("2026-05-01T00:00:00Z"),
    to: utc("2026-05-15T00:00:00Z"),
  }).map((event) => ({ ...event, id: crypto.randomUUID() }));
  await database.db.insert(profiles).values(
    RECORDS.map((record) => ({
      projectId: tenant.projectId,
      id: record.id,
      firstName: record.firstName ?? null,
      lastName: record.lastName ?? null,
      email: record.email ?? null,
      avatar: record.avatar ?? null,
      properties: record.properties ?? {},
    })),
  );
  // Half the events, a refresh, then the rest: the summaries are merged across runs.
  const half = Math.floor(traffic.length / 2);
  await insertEvents(database.db, traffic.slice(0, half) as EventInput[]);
  await insertEvents(database.db, traffic.slice(half) as EventInput[]);
});
afterAll(() => database.close());

const get = <T = unknown>(path: string, params: Record<string, string> = {}) =>
  call<T>(`/insights/${tenant.projectId}/${path}?${queryString(params)}`, {
    headers: credentialHeaders(tenant.read),
  });

const walk = (path: string, params: Record<string, string>) =>
  walkPages((cursor) => get<unknown[]>(path, { ...params, ...(cursor ? { cursor } : {}) }));

const selection = (extra: Partial<ProfileSelection> = {}): ProfileSelection => ({
  projectId: tenant.projectId,
  ...extra,
});

/** The identified profile with the most sessions: the subject of the single-profile routes. */
function busiestProfile(): string {
  const counts = new Map<string, number>();
  for (const event of traffic) {
    if (event.profileId.startsWith("user-") && !event.profileId.startsWith("user-late")) {
      counts.set(event.profileId, (counts.get(event.profileId) ?? 0) + 1);
    }
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? "";
}

describe("/profiles", () => {
  it("lists every profile of the whole history by default, newest first seen first", async () => {
    const response = await get<unknown[]>("profiles");
    expect(response.status).toBe(200);
    const expected = referenceProfileRows(traffic, RECORDS, selection());
    expect(expected.length).toBeGreaterThan(60);
    expect(response.body).toEqual(expected.slice(0, 20));
    expect(response.headers.get("x-window-start")).toBeNull();
    expect(response.headers.get("x-window-end")).toBeTruthy();
    expect(response.headers.get("x-timezone")).toBe("UTC");
  });

  it("walks every profile once by cursor, in either order", async () => {
    expect(await walk("profiles", { limit: "17" })).toEqual(
      referenceProfileRows(traffic, RECORDS, selection()),
    );
    expect(await walk("profiles", { limit: "17", sortOrder: "asc" })).toEqual(
      referenceProfileRows(traffic, RECORDS, selection({ order: "asc" })),
    );
  });

  it("carries the stored record's names, email, avatar and properties", async () => {
    const rows = await walk("profiles", { limit: "100", name: "user-" });
    const ingrid = rows.find((row) => (row as { id: string }).id === "user-0");
    expect(ingrid).toMatchObject({
      first_name: "Ingrid",
      last_name: "Hansen",
      email: "Ingrid.Hansen@example.com",
      properties: { plan: "pro" },
      is_external: true,
    });
  });

  it("with a window lists only profiles with an event in it", async () => {
    const expected = referenceProfileRows(traffic, RECORDS, selection({ window }));
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBeLessThan(referenceProfileRows(traffic, RECORDS, selection()).length);
    const response = await get("profiles", { ...WINDOW, limit: "5" });
    expect(response.headers.get("x-window-start")).toBe("2026-05-05T00:00:00Z");
    expect(await walk("profiles", { ...WINDOW, limit: "9" })).toEqual(expected);
  });

  const now = Date.now();
  const inactiveDays = Math.floor((now - utc("2026-05-08T00:00:00Z")) / DAY);
  it.each<[string, Record<string, string>, Partial<ProfileSelection>]>([
    ["last-known country", { country: "NO" }, { lastKnown: { country: "NO" } }],
    [
      "last-known device and browser",
      { device: "mobile", browser: "Safari" },
      { lastKnown: { device: "mobile", browser: "Safari" } },
    ],
    ["identified", { identified: "true" }, { identified: true }],
    ["anonymous", { identified: "false" }, { identified: false }],
    ["two name tokens", { name: "  INGRID  hans " }, { nameTokens: ["INGRID", "hans"] }],
    ["a name token of the id", { name: "late" }, { nameTokens: ["late"] }],
    ["email", { email: "EXAMPLE.no" }, { email: "EXAMPLE.no" }],
    [
      "a performed event in the window",
      { ...WINDOW, performedEvent: "purchase" },
      { window, performedEvent: "purchase" },
    ],
    ["a performed event ever", { performedEvent: "signup" }, { performedEvent: "signup" }],
    ["minSessions ever", { minSessions: "2" }, { minSessions: 2 }],
    ["minSessions in the window", { ...WINDOW, minSessions: "2" }, { window, minSessions: 2 }],
    [
      "an event filter in the window",
      {
        ...WINDOW,
        filters:
          '[{"name":"properties.plan","operator":"is","value":["pro"]},{"name":"name","operator":"is","value":["signup"]}]',
      },
      {
        window,
        filters: [
          { name: "properties.plan", operator: "is", value: ["pro"] },
          { name: "name", operator: "is", value: ["signup"] },
        ],
      },
    ],
    [
      "an event filter ever",
      { filters: '[{"name":"path","operator":"startsWith","value":["/docs"]}]' },
      { filters: [{ name: "path", operator: "startsWith", value: ["/docs"] }] },
    ],
    ["inactiveDays", { inactiveDays: String(inactiveDays) }, { lastSeenBefore: now - inactiveDays * DAY }],
  ])("selects by %s", async (_label, params, extra) => {
    const expected = referenceProfileRows(traffic, RECORDS, selection(extra));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(
      referenceProfileRows(traffic, RECORDS, selection({ window: extra.window })).length,
    );
    expect(await walk("profiles", { limit: "25", ...params })).toEqual(expected);
  });

  it.each([
    ["six name tokens", { name: "a b c d e f" }, "name"],
    ["identified=yes", { identified: "yes" }, "identified"],
    ["inactiveDays=0", { inactiveDays: "0" }, "inactiveDays"],
    ["inactiveDays=1.5", { inactiveDays: "1.5" }, "inactiveDays"],
    ["minSessions=abc", { minSessions: "abc" }, "minSessions"],
    ["sortOrder=up", { sortOrder: "up" }, "sortOrder"],
    ["limit=101", { limit: "101" }, "limit"],
    ["a forged cursor", { cursor: "abc.def" }, "cursor"],
    ["a lone startDate", { startDate: "2026-05-05" }, "endDate"],
    ["bad filters", { filters: '[{"name":"nope","operator":"is","value":["x"]}]' }, "filters/0/name"],
  ])("%s is a 400 naming it", async (_label, params, path) => {
    expectProblem(await get("profiles", params), 400, "VALIDATION_FAILED", path);
  });

  it("a cursor of another order or of /sessions is a 400", async () => {
    const first = await get("profiles", { limit: "5" });
    const cursor = first.headers.get("x-next-cursor") ?? "";
    expect(cursor).not.toBe("");
    expectProblem(
      await get("profiles", { limit: "5", sortOrder: "asc", cursor }),
      400,
      "VALIDATION_FAILED",
      "cursor",
    );
    const sessions = await get("sessions", { ...WINDOW, limit: "5" });
    const sessionCursor = sessions.headers.get("x-next-cursor") ?? "";
    expectProblem(
      await get("profiles", { limit: "5", cursor: sessionCursor }),
      400,
      "VALIDATION_FAILED",
      "cursor",
    );
  });
});

/** The 404 of a profile id no stored event carries. */
async function expectProfileNotFound(path: string, profileId: string) {
  const response = await get<Record<string, unknown>>(path);
  expect(response.status).toBe(404);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(response.body).toMatchObject({
    code: "NOT_FOUND",
    status: 404,
    detail: "Profile not found",
    profileId,
  });
}

describe("/profiles/{profileId}", () => {
  it("answers the profile row and its newest events", async () => {
    const id = busiestProfile();
    const response = await get<Record<string, unknown>>(`profiles/${id}`, { eventLimit: "5" });
    expect(response.status).toBe(200);
    const own = traffic.filter((event) => event.profileId === id);
    expect(response.body).toEqual({
      profile: profileRow(
        id,
        tenant.projectId,
        own,
        RECORDS.find((record) => record.id === id),
      ),
      recentEvents: referenceEventRows(traffic, {
        projectId: tenant.projectId,
        start: 0,
        end: Number.MAX_SAFE_INTEGER,
        filters: [{ name: "profile_id", operator: "is", value: [id] }],
      }).slice(0, 5),
      meta: { startDate: null, endDate: expect.any(String), timezone: "UTC" },
    });
  });

  it("honours a window and filters for its events, not for the profile row", async () => {
    const id = busiestProfile();
    const filters = [{ name: "name", operator: "is", value: ["screen_view"] }];
    const response = await get<{ profile: unknown; recentEvents: unknown[]; meta: unknown }>(
      `profiles/${id}`,
      {
        ...WINDOW,
        filters: JSON.stringify(filters),
      },
    );
    expect(response.status).toBe(200);
    const own = traffic.filter((event) => event.profileId === id);
    expect(response.body.profile).toEqual(
      profileRow(
        id,
        tenant.projectId,
        own,
        RECORDS.find((r) => r.id === id),
      ),
    );
    expect(response.body.recentEvents).toEqual(
      referenceEventRows(traffic, {
        projectId: tenant.projectId,
        ...window,
        filters: [...filters, { name: "profile_id", operator: "is", value: [id] }],
      }).slice(0, 20),
    );
    expect(response.body.meta).toEqual({
      startDate: "2026-05-05T00:00:00Z",
      endDate: "2026-05-09T23:59:59.999Z",
      timezone: "UTC",
    });
  });

  it("an anonymous visitor has no record: null names, {} properties, not external", async () => {
    const anonymous = traffic.find((event) => event.profileId === event.deviceId)?.profileId ?? "";
    const response = await get<{ profile: unknown }>(`profiles/${anonymous}`);
    const own = traffic.filter((event) => event.profileId === anonymous);
    expect(response.body.profile).toEqual(profileRow(anonymous, tenant.projectId, own));
    expect(response.body.profile).toMatchObject({ first_name: null, properties: {}, is_external: false });
  });

  it("a profile whose events came after the last refresh is found, exact", async () => {
    const at = new Date("2026-05-20T08:00:00.000Z");
    const event = {
      ...traffic[0],
      id: crypto.randomUUID(),
      profileId: "12345",
      deviceId: "fresh-device",
      sessionId: "fresh",
      createdAt: at,
    } as ListedEvent;
    await insertEvents(database.db, [event as EventInput], { refresh: false });
    const response = await get<{ profile: unknown; recentEvents: unknown[] }>("profiles/12345");
    expect(response.status).toBe(200);
    expect(response.body.profile).toEqual(profileRow("12345", tenant.projectId, [event]));
    expect(response.body.recentEvents).toEqual([eventRow(event)]);
  });

  it("an id no event carries is a 404 naming it", async () => {
    await expectProfileNotFound("profiles/nobody-here", "nobody-here");
    await expectProfileNotFound("profiles/nobody-here/sessions", "nobody-here");
    await expectProfileNotFound("profiles/nobody-here/metrics", "nobody-here");
  });

  it.each([
    ["eventLimit=0", { eventLimit: "0" }, "eventLimit"],
    ["eventLimit=101", { eventLimit: "101" }, "eventLimit"],
    ["an unknown timezone", { timezone: "Mars/Base" }, "timezone"],
  ])("%s is a 400 naming it", async (_label, params, path) => {
    expectProblem(await get("profiles/user-0", params), 400, "VALIDATION_FAILED", path);
  });
});

describe("/profiles/{profileId}/sessions", () => {
  it("walks the sessions it is the visitor of, newest first, over its whole history", async () => {
    const id = busiestProfile();
    const expected = referenceSessionRows(traffic, {
      projectId: tenant.projectId,
      start: 0,
      end: Number.MAX_SAFE_INTEGER,
      filters: [{ name: "profile_id", operator: "is", value: [id] }],
    });
    expect(expected.length).toBeGreaterThan(2);
    const first = await get(`profiles/${id}/sessions`, { limit: "2" });
    expect(first.headers.get("x-window-start")).toBeNull();
    expect(await walk(`profiles/${id}/sessions`, { limit: "2" })).toEqual(expected);
  });

  it("honours a window and session-scoped filters", async () => {
    const id = busiestProfile();
    const filters = [{ name: "path", operator: "is", value: ["/pricing"] }];
    const expected = referenceSessionRows(traffic, {
      projectId: tenant.projectId,
      ...window,
      filters: [...filters, { name: "profile_id", operator: "is", value: [id] }],
    });
    expect(await walk(`profiles/${id}/sessions`, { ...WINDOW, filters: JSON.stringify(filters) })).toEqual(
      expected,
    );
  });

  it("limit=0 is a 400", async () => {
    expectProblem(await get("profiles/user-0/sessions", { limit: "0" }), 400, "VALIDATION_FAILED", "limit");
  });
});

describe("/profiles/{profileId}/metrics", () => {
  it("answers its figures over its whole history", async () => {
    const id = busiestProfile();
    const response = await get<Record<string, unknown>>(`profiles/${id}/metrics`);
    expect(response.status).toBe(200);
    const expected = referenceProfileMetrics(traffic, id, {
      projectId: tenant.projectId,
      start: 0,
      end: Number.MAX_SAFE_INTEGER,
      timezone: "UTC",
    });
    expect(expected.sessions).toBeGreaterThan(2);
    expect(expected.conversionEvents).toBeGreaterThan(0);
    expect(response.body).toEqual({
      ...expected,
      meta: { startDate: null, endDate: expect.any(String), timezone: "UTC" },
    });
  });

  it("counts local days in the request timezone and honours a window and filters", async () => {
    const id = busiestProfile();
    const filters = [{ name: "country", operator: "isNot", value: ["SE"] }];
    const response = await get<Record<string, unknown>>(`profiles/${id}/metrics`, {
      startDate: "2026-05-01",
      endDate: "2026-05-12",
      timezone: "Pacific/Kiritimati",
      filters: JSON.stringify(filters),
    });
    const { meta, ...figures } = response.body;
    expect(figures).toEqual(
      referenceProfileMetrics(traffic, id, {
        projectId: tenant.projectId,
        start: utc("2026-04-30T10:00:00Z"),
        end: utc("2026-05-12T10:00:00Z"),
        timezone: "Pacific/Kiritimati",
        filters,
      }),
    );
    expect(meta).toEqual({
      startDate: "2026-05-01T00:00:00+14:00",
      endDate: "2026-05-12T23:59:59.999+14:00",
      timezone: "Pacific/Kiritimati",
    });
  });

  it("a window without its events answers zeros and null times", async () => {
    const id = busiestProfile();
    const response = await get<Record<string, unknown>>(`profiles/${id}/metrics`, {
      startDate: "2025-01-01",
      endDate: "2025-01-31",
      timezone: "UTC",
    });
    expect(response.body).toMatchObject({
      firstSeen: null,
      lastSeen: null,
      sessions: 0,
      totalEvents: 0,
      bounceRate: 0,
      p90SessionDurationMin: 0,
    });
  });

  it("filters=[{bad}] is a 400", async () => {
    expectProblem(await get("profiles/user-0/metrics", { filters: "[1]" }), 400, "VALIDATION_FAILED");
  });
});
