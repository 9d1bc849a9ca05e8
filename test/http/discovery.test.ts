import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIELD_KEYS } from "../support/event-fields";
import {
  createTenant,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type Tenant,
} from "../support/factories";
import { flattenProperties } from "../support/listing-reference";
import type { RawEvent } from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { call, expectProblem, queryString, testDatabase } from "../support/worker/http";

/**
 * Discovery (contract A2): event names, property keys and values over the whole history, each
 * compared with counts made here from the raw events; window parameters ignored, filters a 400.
 */

const database = testDatabase();
let tenant: Tenant;
let history: RawEvent[];
const utc = (text: string) => Date.parse(text);

// The columns of contract A1, in its order: the field map of the test references, but `name`.
const COLUMNS = Object.keys(FIELD_KEYS).filter((field) => field !== "name");

beforeAll(async () => {
  tenant = await createTenant(database.db);
  // Two stretches of history a year apart: discovery covers both whatever the window.
  history = [
    ...generateTraffic({
      projectId: tenant.projectId,
      seed: 81,
      sessions: 60,
      from: utc("2025-03-01T00:00:00Z"),
      to: utc("2025-03-05T00:00:00Z"),
    }),
    ...generateTraffic({
      projectId: tenant.projectId,
      seed: 82,
      sessions: 60,
      from: utc("2026-03-01T00:00:00Z"),
      to: utc("2026-03-05T00:00:00Z"),
    }),
  ];
  const base = history[0] as RawEvent;
  history.push(
    {
      ...base,
      name: "Checkout Started",
      properties: { cart: { items: [{ sku: "A-1" }, "gift"] }, plan: "pro", none: null, empty: "" },
    },
    { ...base, name: "checkout_done", properties: { plan: "team", "100%": "yes" } },
  );
  const sibling = generateTraffic({
    projectId: tenant.siblingProjectId,
    seed: 83,
    sessions: 20,
    from: utc("2026-03-01T00:00:00Z"),
    to: utc("2026-03-02T00:00:00Z"),
  });
  await insertEvents(database.db, [...history, ...sibling] as EventInput[]);
});
afterAll(() => database.close());

const get = <T>(path: string, params: Record<string, string | string[]> = {}) =>
  call<T>(`/insights/${tenant.projectId}/events/${path}?${queryString(params)}`, {
    headers: credentialHeaders(tenant.read),
  });

const byCountThenText = (a: [string, number], b: [string, number]) =>
  b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** Values of a key (a column name or `properties.<key>`) with their counts, as discovery orders them. */
function referenceValues(key: string, eventName?: string): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const event of history) {
    if (eventName !== undefined && event.name !== eventName) continue;
    const field = FIELD_KEYS[key];
    const raw = key.startsWith("properties.")
      ? flattenProperties(event.properties)[key.slice("properties.".length)]
      : field === undefined
        ? undefined
        : event[field];
    const text = raw === null || raw === undefined ? "" : String(raw);
    if (text !== "") counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return [...counts].sort(byCountThenText);
}

describe("/events/names", () => {
  const referenceNames = () => {
    const counts = new Map<string, number>();
    for (const event of history) counts.set(event.name, (counts.get(event.name) ?? 0) + 1);
    return [...counts].sort(byCountThenText).map(([name]) => name);
  };

  it("lists every name of the whole history by events, then name, whatever the window", async () => {
    const response = await get<string[]>("names", { range: "7d" });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(referenceNames());
    expect(response.headers.get("x-total-count")).toBe(String(referenceNames().length));
  });

  it("filters by q, case-insensitively and literally", async () => {
    expect((await get<string[]>("names", { q: "CHECKOUT" })).body).toEqual([
      "Checkout Started",
      "checkout_done",
    ]);
    expect((await get<string[]>("names", { q: "t_d" })).body).toEqual(["checkout_done"]);
    expect((await get<string[]>("names", { q: "%" })).body).toEqual([]);
  });

  it("pages with limit and cursor", async () => {
    const first = await get<string[]>("names", { limit: "2" });
    const cursor = first.headers.get("x-next-cursor") ?? "";
    const rest = await get<string[]>("names", { limit: "100", cursor });
    expect([...first.body, ...rest.body]).toEqual(referenceNames());
    expect(first.headers.get("x-total-count")).toBe(String(referenceNames().length));
  });

  it.each([
    ["filters", { filters: "[]" }],
    ["q", { q: "x".repeat(101) }],
    ["limit", { limit: "1001" }],
    ["cursor", { cursor: "forged" }],
  ])("a bad or unsupported %s is a 400", async (param, params) => {
    expectProblem(await get("names", params), 400, "VALIDATION_FAILED", param);
  });
});

describe("/events/properties", () => {
  const referencePairs = (eventName?: string) => {
    const pairs = new Set<string>();
    for (const event of history) {
      if (eventName !== undefined && event.name !== eventName) continue;
      for (const key of Object.keys(flattenProperties(event.properties)))
        pairs.add(JSON.stringify([key, event.name]));
    }
    return [...pairs]
      .map((pair) => JSON.parse(pair) as [string, string])
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
      .map(([property_key, event_name]) => ({ property_key, event_name }));
  };

  it("lists the columns and every flattened (key, event name) pair by key then name", async () => {
    const response = await get<{ columns: string[]; properties: unknown[] }>("properties");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ columns: COLUMNS, properties: referencePairs() });
    expect(response.body.properties).toContainEqual({
      property_key: "cart.items.0.sku",
      event_name: "Checkout Started",
    });
  });

  it("only one event's pairs with eventName (or event); a name never stored is a 400", async () => {
    expect((await get("properties", { eventName: "Checkout Started" })).body).toEqual({
      columns: COLUMNS,
      properties: referencePairs("Checkout Started"),
    });
    expect((await get("properties", { event: "checkout_done" })).body).toEqual({
      columns: COLUMNS,
      properties: referencePairs("checkout_done"),
    });
    expectProblem(
      await get("properties", { eventName: "never_sent" }),
      400,
      "VALIDATION_FAILED",
      "eventName",
    );
    expectProblem(await get("properties", { event: "never_sent" }), 400, "VALIDATION_FAILED", "event");
  });
});

describe("/events/property_values", () => {
  it.each([
    ["a column", "country", undefined],
    ["a column of one event", "path", "screen_view"],
    ["a property, bare", "plan", undefined],
    ["a property, prefixed", "properties.plan", "signup"],
    ["a nested property", "nested.variant", undefined],
    ["a number column", "duration", "screen_view"],
  ])("%s: values by events then text, with counts", async (_label, propertyKey, eventName) => {
    const response = await get<{ values: string[]; counts: unknown }>("property_values", {
      propertyKey,
      counts: "true",
      ...(eventName ? { eventName } : {}),
    });
    expect(response.status).toBe(200);
    const key =
      COLUMNS.includes(propertyKey) || propertyKey.startsWith("properties.")
        ? propertyKey
        : `properties.${propertyKey}`;
    const expected = referenceValues(key, eventName).slice(0, 200);
    expect(expected.length).toBeGreaterThan(0);
    expect(response.body).toEqual({
      event: eventName ?? null,
      property: propertyKey,
      values: expected.map(([value]) => value),
      counts: expected.map(([value, count]) => ({ value, count })),
    });
    expect(response.headers.get("x-values-capped")).toBeNull();
  });

  it("filters by q, pages by cursor and states the list's length", async () => {
    const expected = referenceValues("path").filter(([value]) => value.toLowerCase().includes("a"));
    expect(expected.length).toBeGreaterThan(2);
    const first = await get<{ values: string[] }>("property_values", {
      property: "path",
      q: "A",
      limit: "2",
    });
    expect(first.headers.get("x-total-count")).toBe(String(expected.length));
    const rest = await get<{ values: string[] }>("property_values", {
      property: "path",
      q: "A",
      limit: "100",
      cursor: first.headers.get("x-next-cursor") ?? "",
    });
    expect(rest.body).toMatchObject({ property: "path" });
    expect([...first.body.values, ...rest.body.values]).toEqual(expected.map(([value]) => value));
    expect(first.body).toEqual({
      event: null,
      property: "path",
      values: expected.slice(0, 2).map(([value]) => value),
    });
  });

  it("says when a key has more than 1000 distinct values", async () => {
    // More than 1,000 distinct values of one property in one event name.
    await insertEvents(
      database.db,
      Array.from({ length: 1_005 }, (_, i) => ({
        projectId: tenant.projectId,
        sessionId: "many",
        name: "search",
        createdAt: new Date(utc("2026-03-03T00:00:00Z") + i),
        properties: { term: `term-${String(i).padStart(4, "0")}`, plan: "pro" },
      })),
    );
    const response = await get<{ values: string[] }>("property_values", {
      propertyKey: "term",
      limit: "1000",
    });
    expect(response.headers.get("x-values-capped")).toBe("1000");
    expect(response.headers.get("x-total-count")).toBe("1000");
    expect(response.body.values).toHaveLength(1000);
    expect(response.body.values[0]).toBe("term-0000");
  });

  it.each([
    ["propertyKey", { limit: "5" }],
    ["propertyKey", { propertyKey: "never.set" }],
    ["property", { property: "plan", eventName: "screen_view" }],
    ["eventName", { propertyKey: "plan", eventName: "never_sent" }],
    ["counts", { propertyKey: "plan", counts: "yes" }],
    ["filters", { propertyKey: "plan", filters: '[{"name":"country","operator":"is","value":["NO"]}]' }],
  ])("%s: a 400 naming it", async (param, params) => {
    expectProblem(await get("property_values", params), 400, "VALIDATION_FAILED", param);
  });
});
