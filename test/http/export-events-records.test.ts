import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventMeta, profiles } from "../../src/db/schema";
import { createTenant, insertEvents, type Tenant, type TestClient } from "../support/factories";
import {
  ALWAYS_KEYS,
  expectCell,
  exportEvents,
  GROUP_KEYS,
  ids,
  type PageBody,
  parseCsv,
  ownProject as projectOf,
} from "../support/worker/export-events";
import { expectProblem, testDatabase } from "../support/worker/http";

/**
 * GET /export/events (contract section 6): the records, their `includes` groups and CSV quoting.
 * Every expectation is computed here in plain TypeScript from the rows the test inserted.
 */

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
});
afterAll(() => database.close());

/** A project of the tenant's organization with its own read client, so each describe reads its own rows. */
const ownProject = () => projectOf(database, tenant);

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

  it.each([
    // OpenPanel's clients: one field per token, repeated or comma-separated.
    [
      ["region", "longitude"],
      ["region", "longitude"],
    ],
    [
      "properties,device,referrerName,country",
      ["properties", "device", "brand", "model", "osVersion", "browserVersion", "referrerName"],
    ],
    ["utmCampaign,latitude", ["latitude", "utmCampaign"]],
    ["referrerType,geo", ["region", "latitude", "longitude", "referrerType"]],
    // Fields every record has are accepted and add nothing.
    ["id,name,createdAt,country", []],
  ])("includes=%j by field name adds those fields, in record order", async (includes, added) => {
    const data = await fetchWith(includes);
    for (const record of data) expect(Object.keys(record)).toEqual([...ALWAYS_KEYS, ...added]);
    const [known] = data;
    for (const field of added) {
      if (field !== "profile" && field !== "meta") expect(known).toHaveProperty(field);
    }
  });

  it("a field name carries the same value as its group does", async () => {
    const [byField] = await fetchWith("region,utmSource,browserVersion");
    expect(byField).toMatchObject({ region: "Oslo", utmSource: "google", browserVersion: "17.4" });
  });

  it("an unknown token is a 400 listing the group and field names", async () => {
    for (const includes of ["regionx", "geo,nope", "Region", "profile_id"]) {
      const response = await exportEvents(client, { includes });
      expectProblem(response, 400, "VALIDATION_FAILED", "includes");
      const detail = (response.body as { detail: string }).detail;
      expect(detail).toContain("profile, meta, properties, geo, device, referrer");
      expect(detail).toContain("longitude");
      expect(detail).toContain("referrerName");
    }
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

/** Event paths and the CSV cell each must become (null: an empty cell). */
const PATH_CELLS: Array<[path: string | null, cell: string | null]> = [
  ["/a,b", "/a,b"],
  ['/say "hi"', '/say "hi"'],
  ["/line\nbreak", "/line\nbreak"],
  ["/cr\r\nlf", "/cr\r\nlf"],
  // The empty path is a quoted empty cell, the null path an empty one.
  ["", ""],
  [null, null],
  ["plain", "plain"],
  ['"', '"'],
  [",", ","],
  // Formulas neutralised with a leading ' (OWASP); a plain signed number stays.
  ["\r", "'\r"],
  ['=HYPERLINK("http://evil.example","x")', `'=HYPERLINK("http://evil.example","x")`],
  ["+1+cmd", "'+1+cmd"],
  ["-12", "-12"],
  ["@SUM(A1)", "'@SUM(A1)"],
];

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
    const paths = PATH_CELLS.map(([path]) => path);
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
    expect(records).toHaveLength(14);
    expect(header).toEqual(Object.keys(records[0] ?? {}));
    expect(rows).toHaveLength(records.length);
    for (const [r, record] of records.entries()) {
      const row = rows[r] ?? [];
      expect(row).toHaveLength(header?.length ?? 0);
      for (const [k, key] of (header ?? []).entries()) expectCell(row[k] ?? null, record[key ?? ""]);
    }
    const pathColumn = header?.indexOf("path") ?? -1;
    expect(rows.map((row) => row[pathColumn])).toEqual(PATH_CELLS.map(([, cell]) => cell));
    expect(csv.body).toContain('"/say ""hi"""');
    expect(csv.body).toContain('"\'=HYPERLINK(""http://evil.example"",""x"")"');
  });
});
