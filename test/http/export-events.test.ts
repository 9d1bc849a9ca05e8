import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventMeta, profiles } from "../../src/db/schema";
import { streamBatches } from "../../src/lib/export-format";
import { eventPageQuery } from "../../src/queries/export/events";
import {
  createClient,
  createProject,
  createTenant,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type Tenant,
  type TestClient,
} from "../support/factories";
import type { RawEvent } from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { type ApiResponse, expectProblem, testDatabase } from "../support/worker/http";

/**
 * GET /export/events (contract section 6). Every expectation is computed here in plain
 * TypeScript from the rows the test inserted: order, paging, selection and both stream formats.
 */

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
});
afterAll(() => database.close());

/** A project of the tenant's organization with its own read client, so each describe reads its own rows. */
async function ownProject(): Promise<{ projectId: string; client: TestClient }> {
  const projectId = await createProject(database.db, tenant.organizationId);
  const client = await createClient(database.db, {
    type: "read",
    organizationId: tenant.organizationId,
    projectId,
  });
  return { projectId, client };
}

type Params = Record<string, string | string[] | undefined>;

function search(params: Params): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      query.append(key, item);
    }
  }
  return query.toString();
}

/**
 * Calls the export. Not `call()`: its JSON detection would parse an NDJSON body
 * (`application/x-ndjson`), which is text to check line by line here.
 */
async function exportEvents<T = unknown>(
  client: TestClient,
  params: Params,
  init: { headers?: Record<string, string>; method?: string } = {},
): Promise<ApiResponse<T>> {
  const response = await exports.default.fetch(
    new Request(`http://api.test/export/events?${search(params)}`, {
      method: init.method,
      headers: { ...credentialHeaders(client), ...init.headers },
    }),
  );
  // Decoded by hand: workerd warns when `.text()` reads a type it does not know as text.
  const text = new TextDecoder().decode(await response.arrayBuffer());
  const type = response.headers.get("content-type") ?? "";
  const isJson = /^application\/(problem\+)?json\b/.test(type);
  const body = (isJson && text ? JSON.parse(text) : text) as T;
  return { status: response.status, headers: response.headers, body };
}

interface PageBody {
  meta: {
    count: number;
    limit: number;
    hasMore: boolean;
    next: string | null;
    totalCount?: number;
    pages?: number;
    current?: number;
  };
  data: Array<Record<string, unknown>>;
}

function parseNdjson(text: string): Array<Record<string, unknown>> {
  expect(text === "" || text.endsWith("\n")).toBe(true);
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * A small RFC 4180 reader, independent of the encoder: quoted cells may hold commas, doubled
 * quotes, CR and LF. An unquoted empty cell reads as null, a quoted one (`""`) as "".
 */
function parseCsv(text: string): Array<Array<string | null>> {
  const rows: Array<Array<string | null>> = [];
  let row: Array<string | null> = [];
  let i = 0;
  const endRecord = () => {
    rows.push(row);
    row = [];
  };
  while (i < text.length) {
    let cell: string | null;
    if (text[i] === '"') {
      cell = "";
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted cell");
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        cell += text[i];
        i++;
      }
    } else {
      let end = i;
      while (end < text.length && text[end] !== "," && text[end] !== "\r" && text[end] !== "\n") end++;
      const raw = text.slice(i, end);
      if (raw.includes('"')) throw new Error(`bare quote in unquoted cell ${raw}`);
      cell = raw === "" ? null : raw;
      i = end;
    }
    row.push(cell);
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (text.startsWith("\r\n", i)) {
      i += 2;
      endRecord();
      continue;
    }
    if (i >= text.length) {
      endRecord();
      break;
    }
    throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
  return rows;
}

/** The cell a CSV export must hold for a JSON record's value. */
function expectCell(cell: string | null, value: unknown): void {
  if (value === null) expect(cell).toBeNull();
  else if (typeof value === "object") expect(JSON.parse(cell ?? "null")).toEqual(value);
  else expect(cell).toBe(String(value));
}

/** Export order computed independently: createdAt desc, then id desc (uuid order = lowercase hex order). */
function exportOrder<T extends { id: string; createdAt: Date }>(rows: T[]): T[] {
  return [...rows].sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
}

const ids = (rows: ReadonlyArray<{ id?: unknown }>) => rows.map((row) => String(row.id));

const ALWAYS_KEYS = [
  "id",
  "name",
  "deviceId",
  "profileId",
  "sessionId",
  "projectId",
  "createdAt",
  "path",
  "duration",
  "revenue",
  "country",
  "city",
  "os",
  "browser",
];
const GROUP_KEYS: Record<string, string[]> = {
  profile: ["profile"],
  meta: ["meta"],
  properties: ["properties"],
  geo: ["region", "latitude", "longitude"],
  device: ["device", "brand", "model", "osVersion", "browserVersion"],
  referrer: [
    "origin",
    "referrer",
    "referrerName",
    "referrerType",
    "utmSource",
    "utmMedium",
    "utmCampaign",
    "utmTerm",
    "utmContent",
  ],
};

describe("keyset paging, streams and resuming", () => {
  let projectId: string;
  let client: TestClient;
  let initial: Array<EventInput & { id: string }>;
  const everything: Array<EventInput & { id: string }> = [];
  const base = Date.parse("2026-01-10T00:00:00.000Z");

  beforeAll(async () => {
    ({ projectId, client } = await ownProject());
    // 6000 events (more than one stream batch of 5000), many sharing a millisecond, so `id` breaks ties inside pages and across them.
    initial = Array.from({ length: 6_000 }, (_, i) => ({
      id: crypto.randomUUID(),
      projectId,
      sessionId: `s-${i % 97}`,
      profileId: `p-${i % 31}`,
      name: i % 5 === 0 ? "purchase" : "screen_view",
      path: `/page/${i % 13}`,
      revenue: i % 5 === 0 ? 100 + i : 0,
      duration: i * 7,
      createdAt: new Date(base - Math.floor(i / 4) * 61_000 - (i % 3 === 0 ? 0 : 123)),
    }));
    everything.push(...initial);
    await insertEvents(database.db, initial, { refresh: false });
  });

  it("walks every page with `cursor` while events arrive: no duplicate, no gap, exact order", async () => {
    const expected = ids(exportOrder(initial));
    const newest = Math.max(...initial.map((event) => event.createdAt.getTime()));
    const walked: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const response = await exportEvents<PageBody>(client, { limit: "250", cursor });
      expect(response.status).toBe(200);
      const { meta, data } = response.body;
      expect(meta.count).toBe(data.length);
      expect(meta.limit).toBe(250);
      expect(Object.keys(meta).sort()).toEqual(["count", "hasMore", "limit", "next"]);
      walked.push(...ids(data));
      pages++;
      if (!meta.hasMore) {
        expect(meta.next).toBeNull();
        expect(response.headers.get("x-next-cursor")).toBeNull();
        break;
      }
      expect(meta.next).toEqual(expect.any(String));
      expect(response.headers.get("x-next-cursor")).toBe(meta.next);
      expect(response.headers.get("link")).toContain(`cursor=${meta.next}`);
      cursor = meta.next ?? undefined;
      // Between pages: brand-new events, and older-than-now events that still sort before the
      // cursor (one even at the cursor's own millisecond with a larger id). Neither may show up.
      const last = data.at(-1) as { id: string; createdAt: string };
      const cursorTime = Date.parse(last.createdAt);
      let tieId = crypto.randomUUID();
      while (tieId <= last.id) tieId = crypto.randomUUID();
      const arrivals = [
        { createdAt: new Date(Date.now()), id: crypto.randomUUID() },
        { createdAt: new Date(newest + 5_000), id: crypto.randomUUID() },
        {
          createdAt: new Date(cursorTime + 1 + Math.floor((newest - cursorTime) / 2)),
          id: crypto.randomUUID(),
        },
        { createdAt: new Date(cursorTime), id: tieId },
      ].map((arrival) => ({ ...arrival, projectId, sessionId: "late", name: "late_arrival" }));
      everything.push(...arrivals);
      await insertEvents(database.db, arrivals, { refresh: false });
    }
    expect(pages).toBe(24);
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked).toEqual(expected);
  });

  it("streams NDJSON and CSV of the same query in the same order, across batches", async () => {
    const expected = ids(exportOrder(everything));
    expect(expected.length).toBeGreaterThan(5_000);
    const ndjson = await exportEvents<string>(client, { format: "ndjson" });
    expect(ndjson.status).toBe(200);
    expect(ndjson.headers.get("content-type")).toBe("application/x-ndjson");
    expect(ndjson.headers.get("content-disposition")).toBe(
      `attachment; filename="events-${projectId}.ndjson"`,
    );
    expect(ids(parseNdjson(ndjson.body))).toEqual(expected);

    const csv = await exportEvents<string>(client, { format: "csv" });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="events-${projectId}.csv"`);
    const [header, ...rows] = parseCsv(csv.body);
    expect(header).toEqual(ALWAYS_KEYS);
    expect(rows.map((row) => row[0])).toEqual(expected);
  });

  it("sends full records: the always-present fields exactly as inserted", async () => {
    const expected = exportOrder(everything).slice(0, 40);
    const response = await exportEvents<PageBody>(client, { limit: "40" });
    expect(response.body.data).toEqual(
      expected.map((event) => ({
        id: event.id,
        name: event.name ?? "screen_view",
        deviceId: event.deviceId ?? `d-${event.sessionId}`,
        profileId: event.profileId ?? event.deviceId ?? `d-${event.sessionId}`,
        sessionId: event.sessionId,
        projectId,
        createdAt: event.createdAt.toISOString(),
        path: event.path ?? "/",
        duration: event.duration ?? 0,
        revenue: event.revenue ?? 0,
        country: null,
        city: null,
        os: null,
        browser: null,
      })),
    );
    expect(response.body.data[0]?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("`page` mode: offset pages whose totalCount, pages and current agree with the data", async () => {
    const expected = ids(exportOrder(everything));
    const first = await exportEvents<PageBody>(client, { page: "1", limit: "1000" });
    expect(first.body.meta).toMatchObject({
      count: 1000,
      limit: 1000,
      hasMore: true,
      totalCount: expected.length,
      pages: Math.ceil(expected.length / 1000),
      current: 1,
    });
    expect(ids(first.body.data)).toEqual(expected.slice(0, 1000));
    const third = await exportEvents<PageBody>(client, { page: "3", limit: "1000" });
    expect(ids(third.body.data)).toEqual(expected.slice(2000, 3000));
    expect(third.body.meta.current).toBe(3);
    const beyond = await exportEvents<PageBody>(client, { page: "99", limit: "1000" });
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta).toMatchObject({
      count: 0,
      hasMore: false,
      next: null,
      totalCount: expected.length,
    });
    // The cursor of a page continues where it ended.
    const fourth = await exportEvents<PageBody>(client, {
      cursor: third.body.meta.next ?? "",
      limit: "1000",
    });
    expect(ids(fourth.body.data)).toEqual(expected.slice(3000, 4000));
  });

  it("totalCount=true on a cursor page states the total and which page this is", async () => {
    const expected = ids(exportOrder(everything));
    const first = await exportEvents<PageBody>(client, { limit: "100", totalCount: "true" });
    expect(first.body.meta).toMatchObject({ totalCount: expected.length, current: 1 });
    const second = await exportEvents<PageBody>(client, {
      limit: "100",
      totalCount: "true",
      cursor: first.body.meta.next ?? "",
    });
    expect(second.body.meta).toMatchObject({
      count: 100,
      totalCount: expected.length,
      pages: Math.ceil(expected.length / 100),
      current: 2,
    });
    expect(ids(second.body.data)).toEqual(expected.slice(100, 200));
  });

  it("`after` resumes exactly after the given event, in JSON and in NDJSON", async () => {
    const expected = ids(exportOrder(everything));
    const anchor = expected[1234] as string;
    const page = await exportEvents<PageBody>(client, { after: anchor, limit: "10" });
    expect(ids(page.body.data)).toEqual(expected.slice(1235, 1245));
    const stream = await exportEvents<string>(client, { after: anchor, format: "ndjson" });
    expect(ids(parseNdjson(stream.body))).toEqual(expected.slice(1235));
    const upper = await exportEvents<PageBody>(client, { after: anchor.toUpperCase(), limit: "1" });
    expect(ids(upper.body.data)).toEqual(expected.slice(1235, 1236));
    const lastOne = await exportEvents<PageBody>(client, { after: expected.at(-1) });
    expect(lastOne.body.meta).toMatchObject({ count: 0, hasMore: false, next: null });
  });

  it("an explicit `limit` caps a stream; `page` streams that page", async () => {
    const expected = ids(exportOrder(everything));
    const ndjson = await exportEvents<string>(client, { format: "ndjson", limit: "7" });
    expect(ids(parseNdjson(ndjson.body))).toEqual(expected.slice(0, 7));
    const csv = await exportEvents<string>(client, { format: "csv", limit: "3", after: expected[9] });
    const [header, ...rows] = parseCsv(csv.body);
    expect(header).toEqual(ALWAYS_KEYS);
    expect(rows.map((row) => row[0])).toEqual(expected.slice(10, 13));
    const paged = await exportEvents<string>(client, { format: "ndjson", limit: "20", page: "3" });
    expect(ids(parseNdjson(paged.body))).toEqual(expected.slice(40, 60));
  });

  it("picks the stream format from Accept when `format` is absent; `format` wins", async () => {
    const ndjson = await exportEvents<string>(
      client,
      { limit: "2" },
      { headers: { Accept: "application/x-ndjson" } },
    );
    expect(ndjson.headers.get("content-type")).toBe("application/x-ndjson");
    expect(parseNdjson(ndjson.body)).toHaveLength(2);
    const csv = await exportEvents<string>(
      client,
      { limit: "2" },
      { headers: { Accept: "text/csv, */*;q=0.1" } },
    );
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(parseCsv(csv.body)).toHaveLength(3);
    const json = await exportEvents<PageBody>(
      client,
      { limit: "2", format: "json" },
      { headers: { Accept: "text/csv" } },
    );
    expect(json.headers.get("content-type")).toContain("application/json");
    expect(json.body.data).toHaveLength(2);
  });

  it("sends the first bytes before the export is read, and a client may stop early", async () => {
    const response = await exports.default.fetch(
      new Request(`http://api.test/export/events?format=ndjson`, { headers: credentialHeaders(client) }),
    );
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const lines = new TextDecoder().decode(first.value).split("\n").filter(Boolean);
    // One batch, not the whole export.
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(everything.length);
    await reader.cancel();
  });

  it("answers HEAD with the stream's headers and no body", async () => {
    const response = await exportEvents<string>(client, { format: "csv" }, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.body).toBe("");
  });

  it("a deep keyset page is an index range scan, not an offset", async () => {
    const expected = exportOrder(everything);
    const deep = expected[2900] as { id: string; createdAt: Date };
    const query = eventPageQuery(
      database.db,
      { projectId, names: [], filters: [] },
      new Set(["profile", "meta", "properties"] as const),
      { limit: 51, after: { createdAt: deep.createdAt.getTime(), id: deep.id } },
    ).toSQL();
    // On a small test table the planner's choice follows whatever statistics autovacuum left, so
    // plans that need a sort are priced out here. What is under test is that the keyset condition
    // is an index condition of the export index and no rows are counted off. (On 500k events the
    // planner picks this plan unaided, at 0.7 ms for a page 400,000 events deep.)
    const connection = await database.db.$client.connect();
    let text = "";
    try {
      await connection.query("begin");
      await connection.query("set local enable_sort = off");
      await connection.query("set local enable_bitmapscan = off");
      const plan = await connection.query(`explain ${query.sql}`, query.params);
      text = plan.rows.map((row: Record<string, string>) => Object.values(row)[0]).join("\n");
    } finally {
      await connection.query("rollback");
      connection.release();
    }
    expect(query.sql).not.toMatch(/\boffset\b/i);
    expect(text, text).toMatch(/Index Scan Backward using events_project_time_idx on events/);
    expect(text, text).toMatch(/Index Cond: .*ROW\(created_at, id\) < ROW/);
    expect(text, text).not.toMatch(/Sort/);
  });
});

describe("includes", () => {
  let projectId: string;
  let client: TestClient;
  const at = Date.parse("2026-05-01T12:00:00.000Z");
  const withProfileId = crypto.randomUUID();
  const anonymousId = crypto.randomUUID();

  beforeAll(async () => {
    ({ projectId, client } = await ownProject());
    await database.db.insert(profiles).values({
      projectId,
      id: "user-1",
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      avatar: null,
      isExternal: true,
      properties: { plan: "pro", seats: 3 },
      createdAt: new Date("2026-04-01T08:30:00.250Z"),
      lastSeenAt: null,
    });
    await database.db.insert(eventMeta).values({
      projectId,
      name: "purchase",
      description: "Completed checkout",
      conversion: true,
      color: "#00ff00",
      icon: "cart",
    });
    // A profile and metadata of the same ids in another project must never be joined.
    await database.db.insert(profiles).values({ projectId: tenant.siblingProjectId, id: "anon-device" });
    await database.db.insert(eventMeta).values({ projectId: tenant.siblingProjectId, name: "signup" });
    await insertEvents(
      database.db,
      [
        {
          id: withProfileId,
          projectId,
          sessionId: "s1",
          profileId: "user-1",
          deviceId: "dev-1",
          name: "purchase",
          createdAt: new Date(at),
          revenue: 4_999,
          properties: { sku: "A-1", nested: { qty: 2 } },
          country: "NO",
          region: "Oslo",
          city: "Oslo",
          latitude: 59.9139,
          longitude: 10.7522,
          device: "mobile",
          brand: "Apple",
          model: "iPhone",
          os: "iOS",
          osVersion: "17.4",
          browser: "Safari",
          browserVersion: "17.4",
          origin: "https://example.com",
          referrer: "https://www.google.com/",
          referrerName: "Google",
          referrerType: "search",
          utmSource: "google",
          utmMedium: "cpc",
          utmCampaign: "brand",
          utmTerm: "analytics",
          utmContent: "ad-1",
        },
        {
          id: anonymousId,
          projectId,
          sessionId: "s2",
          profileId: "anon-device",
          deviceId: "anon-device",
          name: "signup",
          createdAt: new Date(at - 1_000),
        },
      ],
      { refresh: false },
    );
  });

  const fetchWith = async (includes: string | string[] | undefined) => {
    const response = await exportEvents<PageBody>(client, { includes });
    expect(response.status).toBe(200);
    return response.body.data;
  };

  it("without includes, only the always-present fields", async () => {
    const data = await fetchWith(undefined);
    expect(ids(data)).toEqual([withProfileId, anonymousId]);
    for (const record of data) expect(Object.keys(record)).toEqual(ALWAYS_KEYS);
  });

  it.each(Object.keys(GROUP_KEYS))("includes=%s adds exactly its fields", async (group) => {
    const data = await fetchWith(group);
    for (const record of data)
      expect(Object.keys(record)).toEqual([...ALWAYS_KEYS, ...(GROUP_KEYS[group] ?? [])]);
  });

  it("profile: one LEFT JOIN, null where the visitor has no profile in this project", async () => {
    const [known, anonymous] = await fetchWith("profile");
    expect(known?.profile).toEqual({
      id: "user-1",
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      avatar: null,
      isExternal: true,
      properties: { plan: "pro", seats: 3 },
      createdAt: "2026-04-01T08:30:00.250Z",
      lastSeenAt: null,
    });
    expect(anonymous?.profile).toBeNull();
  });

  it("meta: the event name's metadata, null where there is none in this project", async () => {
    const [purchase, signup] = await fetchWith("meta");
    expect(purchase?.meta).toEqual({
      name: "purchase",
      description: "Completed checkout",
      conversion: true,
      color: "#00ff00",
      icon: "cart",
    });
    expect(signup?.meta).toBeNull();
  });

  it("properties, geo, device and referrer carry their values; nulls stay null", async () => {
    const [known, anonymous] = await fetchWith("properties,geo,device,referrer");
    expect(known).toMatchObject({
      properties: { sku: "A-1", nested: { qty: 2 } },
      region: "Oslo",
      latitude: 59.9139,
      longitude: 10.7522,
      device: "mobile",
      brand: "Apple",
      model: "iPhone",
      osVersion: "17.4",
      browserVersion: "17.4",
      origin: "https://example.com",
      referrer: "https://www.google.com/",
      referrerName: "Google",
      referrerType: "search",
      utmSource: "google",
      utmMedium: "cpc",
      utmCampaign: "brand",
      utmTerm: "analytics",
      utmContent: "ad-1",
      revenue: 4_999,
      country: "NO",
      city: "Oslo",
      os: "iOS",
      browser: "Safari",
    });
    expect(anonymous).toMatchObject({
      properties: {},
      region: null,
      latitude: null,
      longitude: null,
      utmSource: null,
    });
  });

  it("comma-separated and repeated includes combine; every group in a fixed order", async () => {
    const data = await fetchWith(["referrer, geo", "profile", "meta,properties", "device", "geo"]);
    const all = Object.values(GROUP_KEYS).flat();
    for (const record of data) expect(Object.keys(record)).toEqual([...ALWAYS_KEYS, ...all]);
  });

  it("the CSV header follows the includes, nested groups as JSON text", async () => {
    const response = await exportEvents<string>(client, { format: "csv", includes: "profile,meta,geo" });
    const [header, known, anonymous] = parseCsv(response.body);
    expect(header).toEqual([...ALWAYS_KEYS, "profile", "meta", "region", "latitude", "longitude"]);
    expect(JSON.parse(known?.[14] ?? "null")).toMatchObject({ id: "user-1", firstName: "Ada" });
    expect(JSON.parse(known?.[15] ?? "null")).toMatchObject({ name: "purchase", conversion: true });
    expect(known?.slice(16)).toEqual(["Oslo", "59.9139", "10.7522"]);
    expect(anonymous?.slice(14)).toEqual([null, null, null, null, null]);
  });
});

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

describe("CSV quoting", () => {
  let projectId: string;
  let client: TestClient;

  beforeAll(async () => {
    ({ projectId, client } = await ownProject());
    await database.db.insert(profiles).values({
      projectId,
      id: 'quote"user',
      firstName: 'Jo, "the" Tester',
      properties: { bio: "line one\nline two", tags: ["a,b", 'c"d'] },
    });
    const at = Date.parse("2026-07-01T00:00:00.000Z");
    const paths = ["/a,b", '/say "hi"', "/line\nbreak", "/cr\r\nlf", "", null, "plain", '"', ",", "\r"];
    await insertEvents(
      database.db,
      paths.map((path, i) => ({
        projectId,
        sessionId: `s${i}`,
        profileId: 'quote"user',
        createdAt: new Date(at - i * 1_000),
        path,
        city: i % 2 === 0 ? 'Zürich, "CH"' : null,
        properties: { note: `x, "y"\nz ${i}`, nested: { list: [1, "b,c", null], empty: "" } },
      })),
      { refresh: false },
    );
  });

  it("quotes commas, quotes, CR and LF; nested values as JSON text; null empty, '' quoted", async () => {
    const params = { includes: "profile,properties,meta" };
    const json = await exportEvents<PageBody>(client, { ...params, limit: "1000" });
    const csv = await exportEvents<string>(client, { ...params, format: "csv" });
    expect(csv.status).toBe(200);
    expect(csv.body.endsWith("\r\n")).toBe(true);
    const [header, ...rows] = parseCsv(csv.body);
    const records = json.body.data;
    expect(records).toHaveLength(10);
    expect(header).toEqual(Object.keys(records[0] ?? {}));
    expect(rows).toHaveLength(records.length);
    for (const [r, record] of records.entries()) {
      const row = rows[r] ?? [];
      expect(row).toHaveLength(header?.length ?? 0);
      for (const [k, key] of (header ?? []).entries()) expectCell(row[k] ?? null, record[key ?? ""]);
    }
    // The empty path is a quoted empty cell, the null path an empty one.
    const pathColumn = header?.indexOf("path") ?? -1;
    expect(rows.map((row) => row[pathColumn])).toEqual([
      "/a,b",
      '/say "hi"',
      "/line\nbreak",
      "/cr\r\nlf",
      "",
      null,
      "plain",
      '"',
      ",",
      "\r",
    ]);
    expect(csv.body).toContain('"/say ""hi"""');
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

  const forged = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

  const CASES: Array<[string, Params, string]> = [
    ["limit=0", { limit: "0" }, "limit"],
    ["limit=1001", { limit: "1001" }, "limit"],
    ["limit=abc", { limit: "abc" }, "limit"],
    ["limit=-5", { limit: "-5" }, "limit"],
    ["an unknown include", { includes: "profile,bogus" }, "includes"],
    ["an unknown repeated include", { includes: ["geo", "nope"] }, "includes"],
    ["a cursor that is not base64url", { cursor: "not a cursor!" }, "cursor"],
    ["a cursor of the wrong shape", { cursor: forged("v1:abc:def") }, "cursor"],
    ["a cursor with a bad id", { cursor: forged("v1:1767225600000:not-a-uuid") }, "cursor"],
    ["a cursor out of range", { cursor: forged(`v1:9999999999999999:${crypto.randomUUID()}`) }, "cursor"],
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

describe("the streamed body", () => {
  const read = async (body: ReadableStream<Uint8Array>) => {
    const reader = body.getReader();
    const chunks: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return chunks;
      chunks.push(new TextDecoder().decode(value));
    }
  };

  it("sends one batch per pull, skips empty batches and settles `finished` at the end", async () => {
    const batches = ["b1\n", "", "b2\n"];
    const errors: unknown[] = [];
    const stream = streamBatches({
      first: "header\n",
      next: async () => batches.shift(),
      onError: (error) => errors.push(error),
    });
    expect(await read(stream.body)).toEqual(["header\n", "b1\n", "b2\n"]);
    await stream.finished;
    expect(errors).toEqual([]);
  });

  it("a failure after the first bytes errors the stream, no error document; `finished` settles", async () => {
    const errors: unknown[] = [];
    const failure = new Error("connection terminated");
    let calls = 0;
    const stream = streamBatches({
      first: "row 1\n",
      next: async () => {
        calls++;
        if (calls === 1) return "row 2\n";
        throw failure;
      },
      onError: (error) => errors.push(error),
    });
    const reader = stream.body.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("row 1\n");
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("row 2\n");
    await expect(reader.read()).rejects.toBe(failure);
    await stream.finished;
    expect(errors).toEqual([failure]);
  });

  it("a client that goes away cancels it: `finished` settles and nothing more is read", async () => {
    let calls = 0;
    const stream = streamBatches({
      first: "first\n",
      next: async () => {
        calls++;
        return "more\n";
      },
      onError: () => {},
    });
    const reader = stream.body.getReader();
    await reader.read();
    await reader.cancel();
    await stream.finished;
    const settled = calls;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toBe(settled);
  });
});
