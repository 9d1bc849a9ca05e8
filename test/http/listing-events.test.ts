import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTenant,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type Tenant,
} from "../support/factories";
import { type ListedEvent, referenceEventRows } from "../support/listing-reference";
import { generateTraffic } from "../support/traffic";
import { call, expectProblem, queryString, testDatabase, walkPages } from "../support/worker/http";

/**
 * GET /insights/{projectId}/events (contract A3): every row, its shape and its order against the
 * reference over the raw events; keyset pages that neither repeat nor skip; every bad input a 400.
 */

const database = testDatabase();
let tenant: Tenant;
let traffic: ListedEvent[];
const utc = (text: string) => Date.parse(text);
const WINDOW = { startDate: "2026-07-01", endDate: "2026-07-10", timezone: "UTC" };
const scope = () => ({
  projectId: tenant.projectId,
  start: utc("2026-07-01T00:00:00Z"),
  end: utc("2026-07-11T00:00:00Z"),
});

beforeAll(async () => {
  tenant = await createTenant(database.db);
  const generated = generateTraffic({
    projectId: tenant.projectId,
    seed: 71,
    sessions: 90,
    from: utc("2026-06-29T00:00:00Z"),
    to: utc("2026-07-13T00:00:00Z"),
  });
  traffic = generated.map((event) => ({ ...event, id: crypto.randomUUID() }));
  // Nested objects and arrays, and unset values, for the flattened properties; two events share a
  // millisecond, so the id orders them.
  const at = new Date("2026-07-05T12:00:00.123Z");
  const shared = {
    ...generated[0],
    projectId: tenant.projectId,
    sessionId: "nested",
    createdAt: at,
  } as ListedEvent;
  traffic.push(
    {
      ...shared,
      id: "00000000-0000-4000-8000-00000000000a",
      name: "checkout",
      properties: {
        cart: { items: [{ sku: "A-1", qty: 2 }, "gift"], total: 24.5 },
        ok: true,
        none: null,
        empty: "",
      },
    },
    { ...shared, id: "00000000-0000-4000-8000-00000000000b", name: "checkout", properties: { plan: "pro" } },
  );
  const sibling = generateTraffic({
    projectId: tenant.siblingProjectId,
    seed: 72,
    sessions: 10,
    from: utc("2026-07-01T00:00:00Z"),
    to: utc("2026-07-10T00:00:00Z"),
  });
  await insertEvents(database.db, [...traffic, ...sibling] as EventInput[]);
});
afterAll(() => database.close());

const list = <T = unknown[]>(params: Record<string, string | string[]>) => {
  return call<T>(`/insights/${tenant.projectId}/events?${queryString(params)}`, {
    headers: credentialHeaders(tenant.read),
  });
};

/** Every page of a listing, following X-Next-Cursor. */
const walk = (params: Record<string, string | string[]>) =>
  walkPages((cursor) => list<unknown[]>({ ...params, ...(cursor ? { cursor } : {}) }));

describe("/events", () => {
  it("lists the window's events newest first, 20 by default, as OpenPanel's rows", async () => {
    const response = await list(WINDOW);
    expect(response.status).toBe(200);
    const expected = referenceEventRows(traffic, scope());
    expect(expected.length).toBeGreaterThan(100);
    expect(response.body).toEqual(expected.slice(0, 20));
    expect(response.headers.get("x-window-start")).toBe("2026-07-01T00:00:00Z");
    expect(response.headers.get("x-next-cursor")).toBeTruthy();
  });

  it("walks every event of the window once by cursor", async () => {
    const rows = await walk({ ...WINDOW, limit: "37" });
    expect(rows).toEqual(referenceEventRows(traffic, scope()));
  });

  it("flattens properties: dotted keys, set leaves, each as text", async () => {
    const rows = (
      await list<Array<{ id: string; properties: unknown }>>({ ...WINDOW, eventNames: "checkout" })
    ).body;
    expect(rows.map((row) => row.id)).toEqual([
      "00000000-0000-4000-8000-00000000000b",
      "00000000-0000-4000-8000-00000000000a",
    ]);
    expect(rows[1]?.properties).toEqual({
      "cart.items.0.sku": "A-1",
      "cart.items.0.qty": "2",
      "cart.items.1": "gift",
      "cart.total": "24.5",
      ok: "true",
    });
  });

  it.each([
    ["names, repeated", { eventNames: ["signup", "purchase"] }, { names: ["signup", "purchase"] }],
    ["names, as a JSON array", { eventNames: '["signup","purchase"]' }, { names: ["signup", "purchase"] }],
    ["a column", { country: "NO" }, { filters: [{ name: "country", operator: "is", value: ["NO"] }] }],
    [
      "columns, ANDed",
      { browser: "Safari", city: "Oslo", path: "/pricing" },
      {
        filters: [
          { name: "browser", operator: "is", value: ["Safari"] },
          { name: "city", operator: "is", value: ["Oslo"] },
          { name: "path", operator: "is", value: ["/pricing"] },
        ],
      },
    ],
    [
      "a property's text",
      { properties: '{"plan":"pro","nested.variant":"A"}' },
      {
        filters: [
          { name: "properties.plan", operator: "is", value: ["pro"] },
          { name: "properties.nested.variant", operator: "is", value: ["A"] },
        ],
      },
    ],
    [
      "event-scoped filters on columns and properties",
      {
        filters:
          '[{"name":"path","operator":"startsWith","value":["/p"]},{"name":"properties.price","operator":"gte","value":[9]}]',
      },
      {
        filters: [
          { name: "path", operator: "startsWith", value: ["/p"] },
          { name: "properties.price", operator: "gte", value: [9] },
        ],
      },
    ],
  ])("selects by %s", async (_label, params, selection) => {
    const rows = await walk({ ...WINDOW, limit: "50", ...params });
    const expected = referenceEventRows(traffic, { ...scope(), ...selection });
    expect(expected.length).toBeGreaterThan(0);
    expect(rows).toEqual(expected);
  });

  it("takes a comma as part of a name", async () => {
    expect((await list({ ...WINDOW, eventNames: "signup,purchase" })).body).toEqual([]);
    expect((await list({ ...WINDOW, eventNames: "signup" })).body).not.toEqual([]);
  });

  it("honours range and the profile id exactly", async () => {
    const profile = traffic.find((event) => event.profileId.startsWith("user-"))?.profileId ?? "";
    const rows = await walk({ ...WINDOW, profileId: profile });
    expect(rows).toEqual(
      referenceEventRows(traffic, {
        ...scope(),
        filters: [{ name: "profile_id", operator: "is", value: [profile] }],
      }),
    );
    expect((await list({ range: "30min" })).body).toEqual([]);
  });

  it.each([
    ["limit=0", { limit: "0" }, "limit"],
    ["limit=101", { limit: "101" }, "limit"],
    ["a cursor this API did not issue", { cursor: "abc.def" }, "cursor"],
    ["eventNames with a bad JSON array", { eventNames: '["a",1]' }, "eventNames"],
    ["properties that are not JSON", { properties: "{plan" }, "properties"],
    ["properties that are an array", { properties: '["pro"]' }, "properties"],
    ["a property value that is not text", { properties: '{"price":49}' }, "properties/price"],
    ["a lone startDate", { startDate: "2026-07-01" }, "endDate"],
    [
      "filters with an unknown name",
      { filters: '[{"name":"nope","operator":"is","value":["x"]}]' },
      "filters/0/name",
    ],
  ])("%s is a 400 naming it", async (_label, params, path) => {
    expectProblem(await list(params), 400, "VALIDATION_FAILED", path);
  });

  it("a cursor of another query is a 400", async () => {
    const first = await list({ ...WINDOW, limit: "5" });
    const cursor = first.headers.get("x-next-cursor") ?? "";
    expect((await list({ ...WINDOW, limit: "5", cursor })).status).toBe(200);
    expectProblem(
      await list({ ...WINDOW, country: "NO", limit: "5", cursor }),
      400,
      "VALIDATION_FAILED",
      "cursor",
    );
  });
});
