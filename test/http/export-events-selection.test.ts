import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTenant,
  type EventInput,
  insertEvents,
  type Tenant,
  type TestClient,
} from "../support/factories";
import type { RawEvent } from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { signedCursor } from "../support/worker/cursors";
import {
  exportEvents,
  exportOrder,
  ids,
  type PageBody,
  type Params,
  parseNdjson,
  ownProject as projectOf,
} from "../support/worker/export-events";
import { expectProblem, testDatabase } from "../support/worker/http";

/**
 * GET /export/events (contract section 6): what is selected (event, profileId, start/end,
 * filters), bad input and the project. Every expectation is computed here in plain TypeScript from
 * the rows the test inserted.
 */

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
});
afterAll(() => database.close());

/** A project of the tenant's organization with its own read client, so each describe reads its own rows. */
const ownProject = () => projectOf(database, tenant);

/** A minimal filter evaluator for the cases below, written from contract section 3. */
function passes(
  event: RawEvent & { id: string },
  filter: { name: string; operator: string; value?: unknown[] },
) {
  const raw: unknown = filter.name.startsWith("properties.")
    ? filter.name
        .slice("properties.".length)
        .split(".")
        .reduce<unknown>(
          (value, key) =>
            value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined,
          event.properties,
        )
    : (event as unknown as Record<string, unknown>)[filter.name];
  const text =
    raw === null || raw === undefined ? null : typeof raw === "object" ? JSON.stringify(raw) : String(raw);
  const values = (filter.value ?? []).map(String);
  switch (filter.operator) {
    case "is":
      return text !== null && values.includes(text);
    case "isNot":
      return text === null || !values.includes(text);
    case "contains":
      return text !== null && values.some((value) => text.includes(value));
    case "doesNotContain":
      return text === null || !values.some((value) => text.includes(value));
    case "startsWith":
      return text !== null && values.some((value) => text.startsWith(value));
    case "gt":
      return text !== null && Number(text) > Number(values[0]);
    case "isNull":
      return text === null || text === "";
    default:
      throw new Error(`no evaluator for ${filter.operator}`);
  }
}

describe("selection: event, profileId, start/end, filters", () => {
  let projectId: string;
  let client: TestClient;
  let traffic: Array<RawEvent & { id: string }>;

  beforeAll(async () => {
    ({ projectId, client } = await ownProject());
    traffic = generateTraffic({
      projectId,
      seed: 41,
      sessions: 220,
      from: Date.parse("2026-03-24T00:00:00Z"),
      to: Date.parse("2026-03-31T00:00:00Z"),
    }).map((event) => ({ ...event, id: crypto.randomUUID() }));
    const noise = generateTraffic({
      projectId: tenant.siblingProjectId,
      seed: 42,
      sessions: 30,
      from: Date.parse("2026-03-24T00:00:00Z"),
      to: Date.parse("2026-03-31T00:00:00Z"),
    });
    await insertEvents(database.db, [...traffic, ...noise] as EventInput[], { refresh: false });
  });

  /** Every matching id through NDJSON, plus a JSON page with the total: both must match `expected`. */
  async function expectSelection(params: Params, keep: (event: RawEvent & { id: string }) => boolean) {
    const expected = ids(exportOrder(traffic.filter(keep)));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(traffic.length);
    const stream = await exportEvents<string>(client, { ...params, format: "ndjson" });
    expect(stream.status).toBe(200);
    expect(ids(parseNdjson(stream.body))).toEqual(expected);
    const page = await exportEvents<PageBody>(client, { ...params, limit: "1000", totalCount: "true" });
    expect(page.status).toBe(200);
    expect(page.body.meta.totalCount).toBe(expected.length);
    expect(ids(page.body.data)).toEqual(expected.slice(0, 1000));
  }

  it("event: one name, or several by repeating the key", async () => {
    await expectSelection({ event: "purchase" }, (event) => event.name === "purchase");
    await expectSelection({ event: ["purchase", "signup"] }, (event) =>
      ["purchase", "signup"].includes(event.name),
    );
  });

  it("profileId: only that visitor, and the count agrees with the data", async () => {
    const counts = new Map<string, number>();
    for (const event of traffic) counts.set(event.profileId, (counts.get(event.profileId) ?? 0) + 1);
    const [busiest] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
    expect(busiest).toBeDefined();
    await expectSelection({ profileId: busiest }, (event) => event.profileId === busiest);
    const none = await exportEvents<PageBody>(client, { profileId: "nobody", totalCount: "true" });
    expect(none.body.meta).toMatchObject({ count: 0, totalCount: 0, pages: 0, hasMore: false });
  });

  it("start and end: date-only end inclusive, in `timezone`", async () => {
    // Europe/Oslo is UTC+1 until 2026-03-29 01:00 UTC, then UTC+2.
    const from = Date.parse("2026-03-25T23:00:00Z");
    const to = Date.parse("2026-03-29T22:00:00Z");
    await expectSelection(
      { start: "2026-03-26", end: "2026-03-29", timezone: "Europe/Oslo" },
      (event) => event.createdAt.getTime() >= from && event.createdAt.getTime() < to,
    );
    // The same dates in UTC (the default).
    const utcFrom = Date.parse("2026-03-26T00:00:00Z");
    const utcTo = Date.parse("2026-03-30T00:00:00Z");
    await expectSelection(
      { start: "2026-03-26", end: "2026-03-29" },
      (event) => event.createdAt.getTime() >= utcFrom && event.createdAt.getTime() < utcTo,
    );
  });

  it("start or end alone; local date-times and RFC 3339 offsets", async () => {
    // 2026-03-27 08:00 in New York (EDT, UTC-4) is 12:00 UTC.
    const from = Date.parse("2026-03-27T12:00:00Z");
    await expectSelection(
      { start: "2026-03-27 08:00:00", timezone: "America/New_York" },
      (event) => event.createdAt.getTime() >= from,
    );
    // An end with seconds includes that whole second.
    const to = Date.parse("2026-03-26T10:30:01Z");
    await expectSelection({ end: "2026-03-26T12:30:00+02:00" }, (event) => event.createdAt.getTime() < to);
  });

  const FILTER_CASES: Array<[string, Array<{ name: string; operator: string; value?: unknown[] }>]> = [
    ["is on a column", [{ name: "country", operator: "is", value: ["NO", "SE"] }]],
    ["isNot matches nulls too", [{ name: "referrerName", operator: "isNot", value: ["Google"] }]],
    ["contains with LIKE metacharacters", [{ name: "path", operator: "contains", value: ["%_"] }]],
    [
      "doesNotContain with several values",
      [{ name: "path", operator: "doesNotContain", value: ["/docs", "/cart"] }],
    ],
    ["a property", [{ name: "properties.plan", operator: "is", value: ["pro"] }]],
    ["a nested property", [{ name: "properties.nested.variant", operator: "is", value: ["B"] }]],
    ["a numeric comparison", [{ name: "duration", operator: "gt", value: [100_000] }]],
    [
      "several filters ANDed",
      [
        { name: "browser", operator: "startsWith", value: ["Saf"] },
        { name: "city", operator: "isNull" },
      ],
    ],
  ];

  it.each(FILTER_CASES)("filters: %s", async (_label, filters) => {
    await expectSelection({ filters: JSON.stringify(filters) }, (event) =>
      filters.every((filter) => passes(event, filter)),
    );
  });

  it("everything at once", async () => {
    const from = Date.parse("2026-03-26T00:00:00Z");
    const filters = [{ name: "device", operator: "is", value: ["mobile"] }];
    await expectSelection(
      { event: ["screen_view", "signup"], start: "2026-03-26", filters: JSON.stringify(filters) },
      (event) =>
        ["screen_view", "signup"].includes(event.name) &&
        event.createdAt.getTime() >= from &&
        event.device === "mobile",
    );
  });
});

describe("bad input: a 400 naming the parameter", () => {
  let client: TestClient;
  let projectId: string;
  let siblingEventId: string;

  beforeAll(async () => {
    ({ projectId, client } = await ownProject());
    siblingEventId = crypto.randomUUID();
    await insertEvents(
      database.db,
      [
        { projectId, sessionId: "s", createdAt: new Date("2026-02-01T00:00:00Z") },
        {
          id: siblingEventId,
          projectId: tenant.siblingProjectId,
          sessionId: "s",
          createdAt: new Date("2026-02-01T00:00:00Z"),
        },
      ],
      { refresh: false },
    );
  });

  const CURSOR_ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
  const forged = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

  const CASES: Array<[string, Params, string]> = [
    ["limit=0", { limit: "0" }, "limit"],
    ["limit=1001", { limit: "1001" }, "limit"],
    ["limit=abc", { limit: "abc" }, "limit"],
    ["limit=-5", { limit: "-5" }, "limit"],
    ["an unknown include", { includes: "profile,bogus" }, "includes"],
    ["an unknown repeated include", { includes: ["geo", "nope"] }, "includes"],
    ["a cursor that is not base64url", { cursor: "not a cursor!" }, "cursor"],
    [
      "an unsigned cursor (its text without the MAC)",
      { cursor: forged(`v1:1767225600000:${CURSOR_ID}`) },
      "cursor",
    ],
    ["after that is not a uuid", { after: "123" }, "after"],
    ["after of an unknown event", { after: crypto.randomUUID() }, "after"],
    ["page=0", { page: "0" }, "page"],
    ["page=abc", { page: "abc" }, "page"],
    ["page=-1", { page: "-1" }, "page"],
    ["page=1.5", { page: "1.5" }, "page"],
    ["start that is no date", { start: "yesterday" }, "start"],
    ["start with an impossible date", { start: "2026-02-30" }, "start"],
    ["end that is no date", { end: "2026-13-01" }, "end"],
    ["end before start", { start: "2026-03-02", end: "2026-03-01" }, "end"],
    ["an unknown timezone", { timezone: "Mars/Olympus_Mons" }, "timezone"],
    ["format=xml", { format: "xml" }, "format"],
    ["totalCount=yes", { totalCount: "yes" }, "totalCount"],
    ["filters that are not JSON", { filters: "[{" }, "filters"],
    [
      "filters with an unknown name",
      { filters: '[{"name":"bogus","operator":"is","value":["x"]}]' },
      "filters/0/name",
    ],
    [
      "filters with an unknown operator",
      { filters: '[{"name":"path","operator":"like","value":["x"]}]' },
      "filters/0/operator",
    ],
    [
      "filters with an invalid regex",
      { filters: '[{"name":"path","operator":"regex","value":["("]}]' },
      "filters/0/value",
    ],
    ["more than 100 event names", { event: Array.from({ length: 101 }, (_, i) => `e${i}`) }, "event"],
    ["a bad parameter on a stream", { format: "csv", limit: "0" }, "limit"],
  ];

  it.each(CASES)("%s", async (_label, params, path) => {
    expectProblem(await exportEvents(client, params), 400, "VALIDATION_FAILED", path);
  });

  it("a cursor signed with the Worker's key and naming a place is honoured (the helper signs right)", async () => {
    const response = await exportEvents<PageBody>(client, {
      cursor: await signedCursor("event", `v1:${Date.parse("2026-03-01T00:00:00Z")}:${CURSOR_ID}`),
    });
    expect(response.status).toBe(200);
    expect(response.body.meta.count).toBe(1);
  });

  it.each([
    ["of the wrong shape", "v1:abc:def", undefined],
    ["with a bad id", "v1:1767225600000:not-a-uuid", undefined],
    ["out of range", `v1:9999999999999999:${CURSOR_ID}`, undefined],
    ["naming a real place but signed with another key", `v1:1767225600000:${CURSOR_ID}`, "another secret"],
  ])("a signed cursor %s is a 400", async (_label, text, secret) => {
    const cursor = await signedCursor("event", text, secret);
    expectProblem(await exportEvents(client, { cursor }), 400, "VALIDATION_FAILED", "cursor");
  });

  it("after of an event in another project", async () => {
    expectProblem(await exportEvents(client, { after: siblingEventId }), 400, "VALIDATION_FAILED", "after");
  });

  it("cursor, after and page exclude each other, each named", async () => {
    const page = await exportEvents<PageBody>(client, { limit: "1" });
    const response = await exportEvents(client, { cursor: page.body.meta.next ?? "x", page: "2" });
    expectProblem(response, 400, "VALIDATION_FAILED", "cursor");
    expectProblem(response, 400, "VALIDATION_FAILED", "page");
  });

  it("blank optional values count as absent", async () => {
    const response = await exportEvents<PageBody>(client, {
      cursor: "",
      after: "",
      start: "",
      end: " ",
      profileId: "",
      event: "",
      includes: "",
    });
    expect(response.status).toBe(200);
    expect(response.body.meta.count).toBe(1);
    expect(projectId).toBeTruthy();
  });
});

describe("export project", () => {
  it("a root client must name the project", async () => {
    expectProblem(await exportEvents(tenant.root, {}), 400, "VALIDATION_FAILED", "projectId");
  });

  it("a read client without projectId gets its own project; project_id is an alias", async () => {
    const at = new Date("2026-08-01T00:00:00Z");
    const own = crypto.randomUUID();
    const sibling = crypto.randomUUID();
    await insertEvents(
      database.db,
      [
        { id: own, projectId: tenant.projectId, sessionId: "own", createdAt: at },
        { id: sibling, projectId: tenant.siblingProjectId, sessionId: "sib", createdAt: at },
      ],
      { refresh: false },
    );
    const implicit = await exportEvents<PageBody>(tenant.read, {});
    expect(implicit.status).toBe(200);
    expect(ids(implicit.body.data)).toContain(own);
    expect(implicit.body.data.every((record) => record.projectId === tenant.projectId)).toBe(true);
    const alias = await exportEvents<PageBody>(tenant.root, { project_id: tenant.siblingProjectId });
    expect(alias.status).toBe(200);
    expect(ids(alias.body.data)).toContain(sibling);
    expect(alias.body.data.every((record) => record.projectId === tenant.siblingProjectId)).toBe(true);
    const named = await exportEvents<PageBody>(tenant.root, { projectId: tenant.projectId, format: "json" });
    expect(ids(named.body.data)).toContain(own);
    expectProblem(
      await exportEvents(tenant.read, { projectId: tenant.siblingProjectId }),
      404,
      "PROJECT_NOT_FOUND",
    );
  });
});
