import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTenant,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type Tenant,
} from "../support/factories";
import {
  type RawEvent,
  type RawFilter,
  type RefScope,
  referenceBreakdown,
  referenceMetrics,
  referencePages,
} from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { call, expectProblem, queryString, testDatabase } from "../support/worker/http";

/**
 * Differential tests: every number the insights endpoints answer is compared with the plain
 * TypeScript reference (test/support/reference.ts) over the same raw events.
 */

const database = testDatabase();
let tenant: Tenant;
let traffic: RawEvent[];

const utc = (text: string) => Date.parse(text);

beforeAll(async () => {
  tenant = await createTenant(database.db);
  const projectId = tenant.projectId;
  traffic = [
    // Around the spring DST change (Europe/Oslo 2026-03-29).
    ...generateTraffic({
      projectId,
      seed: 11,
      sessions: 260,
      from: utc("2026-03-20T00:00:00Z"),
      to: utc("2026-04-05T00:00:00Z"),
    }),
    // Around the autumn changes (Europe/Oslo 2026-10-25, America/New_York 2026-11-01).
    ...generateTraffic({
      projectId,
      seed: 12,
      sessions: 220,
      from: utc("2026-10-20T00:00:00Z"),
      to: utc("2026-11-03T00:00:00Z"),
    }),
    // Dense traffic inside two hours, for minute buckets.
    ...generateTraffic({
      projectId,
      seed: 13,
      sessions: 60,
      from: utc("2026-06-10T10:00:00Z"),
      to: utc("2026-06-10T12:00:00Z"),
    }),
  ];
  // Noise in a sibling project that must never be counted.
  const noise = generateTraffic({
    projectId: tenant.siblingProjectId,
    seed: 14,
    sessions: 40,
    from: utc("2026-03-20T00:00:00Z"),
    to: utc("2026-04-05T00:00:00Z"),
  });
  await insertEvents(database.db, [...traffic, ...noise] as EventInput[]);
});
afterAll(() => database.close());

const get = <T>(path: string, params: Record<string, string | undefined> = {}) =>
  call<T>(`/insights/${tenant.projectId}/${path}?${queryString(params)}`, {
    headers: { ...credentialHeaders(tenant.read), "Cache-Control": "no-cache" },
  });

interface MetricsBody {
  metrics: Record<string, number>;
  series: Array<Record<string, number | string> & { date: string }>;
  previous?: {
    metrics: Record<string, number>;
    series: Array<Record<string, number | string> & { date: string }>;
  };
  meta: { startDate: string; endDate: string; timezone: string; interval: string; approximate: string[] };
}

/** The window a response states, as [start, end) milliseconds. */
function stated(meta: { startDate: string; endDate: string }) {
  return { start: Date.parse(meta.startDate), end: Date.parse(meta.endDate) + 1 };
}

async function expectMetricsMatchReference(
  params: Record<string, string | undefined>,
  filters: RawFilter[] = [],
) {
  const response = await get<MetricsBody>("metrics", { ...params, filters: JSON.stringify(filters) });
  expect(response.status).toBe(200);
  const body = response.body;
  const window = stated(body.meta);
  const buckets = body.series.map((point) => Date.parse(point.date));
  const scope: RefScope = { projectId: tenant.projectId, ...window, filters };
  const expected = referenceMetrics(traffic, scope, buckets);
  expect(body.metrics).toEqual(expected.metrics);
  expect(body.series.map(({ date: _date, ...rest }) => rest)).toEqual(expected.series);
  expect(body.meta.approximate).toEqual([]);
  return body;
}

describe("GET /metrics against the reference", () => {
  it("custom range in UTC, automatic daily buckets", async () => {
    const body = await expectMetricsMatchReference({
      startDate: "2026-03-22",
      endDate: "2026-04-02",
      timezone: "UTC",
    });
    expect(body.meta).toEqual({
      startDate: "2026-03-22T00:00:00Z",
      endDate: "2026-04-02T23:59:59.999Z",
      timezone: "UTC",
      interval: "day",
      approximate: [],
    });
    expect(body.series).toHaveLength(12);
    expect(body.metrics.total_sessions).toBeGreaterThan(100);
    expect(Object.keys(body).sort()).toEqual(["meta", "metrics", "series"]);
    expect(Object.keys(body.metrics).sort()).toEqual([
      "avg_session_duration",
      "bounce_rate",
      "total_revenue",
      "total_screen_views",
      "total_sessions",
      "unique_visitors",
      "views_per_session",
    ]);
  });

  it("Europe/Oslo across the spring DST change: 23 hourly buckets on 2026-03-29", async () => {
    const body = await expectMetricsMatchReference({
      startDate: "2026-03-29",
      endDate: "2026-03-29",
      timezone: "Europe/Oslo",
    });
    expect(body.meta.interval).toBe("hour");
    expect(body.series).toHaveLength(23);
    expect(body.series[0]?.date).toBe("2026-03-29T00:00:00+01:00");
    expect(body.series[2]?.date).toBe("2026-03-29T03:00:00+02:00");
  });

  it("Europe/Oslo across the autumn DST change: a 25-hour day in daily buckets, and hourly", async () => {
    const daily = await expectMetricsMatchReference({
      startDate: "2026-10-24",
      endDate: "2026-10-26",
      timezone: "Europe/Oslo",
      interval: "day",
    });
    expect(daily.series.map((point) => point.date)).toEqual([
      "2026-10-24T00:00:00+02:00",
      "2026-10-25T00:00:00+02:00",
      "2026-10-26T00:00:00+01:00",
    ]);
    const hourly = await expectMetricsMatchReference({
      startDate: "2026-10-25",
      endDate: "2026-10-25",
      timezone: "Europe/Oslo",
    });
    expect(hourly.series).toHaveLength(25);
  });

  it("America/New_York across its DST change, daily and hourly", async () => {
    await expectMetricsMatchReference({
      startDate: "2026-10-30",
      endDate: "2026-11-02",
      timezone: "America/New_York",
    });
    const hourly = await expectMetricsMatchReference({
      startDate: "2026-11-01",
      endDate: "2026-11-01",
      timezone: "America/New_York",
      interval: "hour",
    });
    expect(hourly.series).toHaveLength(25);
  });

  it("weekly buckets start on Monday; monthly buckets cover the year", async () => {
    const weekly = await expectMetricsMatchReference({
      startDate: "2026-03-18",
      endDate: "2026-04-05",
      timezone: "Europe/Oslo",
      interval: "week",
    });
    expect(weekly.series[0]?.date).toBe("2026-03-16T00:00:00+01:00");
    for (const point of weekly.series)
      expect(new Date(Date.parse(point.date) + 12 * 3_600_000).getUTCDay()).toBe(1);
    const monthly = await expectMetricsMatchReference({
      startDate: "2026-01-01",
      endDate: "2026-12-31",
      timezone: "UTC",
    });
    expect(monthly.meta.interval).toBe("month");
    expect(monthly.series).toHaveLength(12);
  });

  it("minute buckets with date-time bounds", async () => {
    const body = await expectMetricsMatchReference({
      startDate: "2026-06-10 10:15:00",
      endDate: "2026-06-10 11:44:59",
      timezone: "UTC",
      interval: "minute",
    });
    expect(body.series).toHaveLength(90);
  });

  it("RFC 3339 bounds with an offset", async () => {
    await expectMetricsMatchReference({
      startDate: "2026-03-25T06:30:00+01:00",
      endDate: "2026-03-30T18:00:00.000+02:00",
      timezone: "Europe/Oslo",
    });
  });

  it("previous=true: the same number of local days before, paired by position", async () => {
    const params = {
      startDate: "2026-03-29",
      endDate: "2026-04-03",
      timezone: "Europe/Oslo",
      previous: "true",
    };
    const body = await expectMetricsMatchReference(params);
    const previous = body.previous;
    expect(previous).toBeDefined();
    expect(previous?.series[0]?.date).toBe("2026-03-23T00:00:00+01:00");
    expect(previous?.series).toHaveLength(body.series.length);
    const expected = referenceMetrics(
      traffic,
      { projectId: tenant.projectId, start: utc("2026-03-22T23:00:00Z"), end: utc("2026-03-28T23:00:00Z") },
      (previous?.series ?? []).map((point) => Date.parse(point.date)),
    );
    expect(previous?.metrics).toEqual(expected.metrics);
    expect(previous?.series.map(({ date: _date, ...rest }) => rest)).toEqual(expected.series);
  });

  const RANGE = { startDate: "2026-03-20", endDate: "2026-04-05", timezone: "UTC" };
  const FILTER_CASES: Array<[string, RawFilter[]]> = [
    ["is on a session attribute", [{ name: "country", operator: "is", value: ["NO", "SE"] }]],
    ["isNot matches unset values", [{ name: "referrer_name", operator: "isNot", value: ["Google"] }]],
    ["contains with LIKE metacharacters", [{ name: "path", operator: "contains", value: ["%_"] }]],
    [
      "doesNotContain with several values",
      [{ name: "browser", operator: "doesNotContain", value: ["Chr", "Fire"] }],
    ],
    ["startsWith", [{ name: "os", operator: "startsWith", value: ["i", "mac"] }]],
    ["endsWith on an event field", [{ name: "path", operator: "endsWith", value: ["cart", "started"] }]],
    ["regex", [{ name: "city", operator: "regex", value: ["^S[a-z]+ "] }]],
    ["isNull (null or empty)", [{ name: "referrer", operator: "isNull" }]],
    ["isNotNull with camelCase", [{ name: "utmCampaign", operator: "isNotNull" }]],
    ["gt on revenue", [{ name: "revenue", operator: "gt", value: [5_000] }]],
    ["lte on duration", [{ name: "duration", operator: "lte", value: ["0"] }]],
    ["gte on a numeric property", [{ name: "properties.price", operator: "gte", value: [10] }]],
    ["is on a nested property", [{ name: "properties.nested.variant", operator: "is", value: ["B"] }]],
    // `nested` holds an object: its sessions are marked and their events read for its JSON text.
    [
      "contains on a property holding an object",
      [{ name: "properties.nested", operator: "contains", value: ["B"] }],
    ],
    [
      "startsWith on a property holding an object",
      [{ name: "properties.nested", operator: "startsWith", value: ["{"] }],
    ],
    ["is on the event name", [{ name: "name", operator: "is", value: ["purchase"] }]],
    [
      "several filters are ANDed",
      [
        { name: "device", operator: "is", value: ["mobile"] },
        { name: "name", operator: "is", value: ["screen_view"] },
        { name: "utm_source", operator: "isNot", value: ["google"] },
      ],
    ],
  ];

  it.each(FILTER_CASES)("filter: %s", async (_label, filters) => {
    const body = await expectMetricsMatchReference(RANGE, filters);
    expect(body.metrics.total_sessions).toBeGreaterThan(0);
  });
});

describe("GET /pages and breakdowns against the reference", () => {
  const RANGE = { startDate: "2026-03-20", endDate: "2026-04-05", timezone: "UTC", limit: "1000" };

  it("pages: full shape and every row", async () => {
    const response = await get<Array<Record<string, unknown>>>("pages", RANGE);
    expect(response.status).toBe(200);
    const expected = referencePages(traffic, {
      projectId: tenant.projectId,
      start: utc("2026-03-20T00:00:00Z"),
      end: utc("2026-04-06T00:00:00Z"),
    });
    expect(response.body).toEqual(expected);
    expect(expected.length).toBeGreaterThan(5);
    expect(response.headers.get("x-next-cursor")).toBeNull();
    expect(response.headers.get("link")).toBeNull();
    expect(response.headers.get("x-window-start")).toBe("2026-03-20T00:00:00Z");
    expect(response.headers.get("x-window-end")).toBe("2026-04-05T23:59:59.999Z");
  });

  const PAGE_FILTER_CASES: Array<[string, RawFilter[]]> = [
    ["an event-field filter keeps whole sessions", [{ name: "path", operator: "is", value: ["/pricing"] }]],
    ["a session attribute", [{ name: "country", operator: "is", value: ["NO", "SE"] }]],
    [
      "isNot on path keeps sessions with some other page",
      [{ name: "path", operator: "isNot", value: ["/"] }],
    ],
    ["origin is unset on some event (non-view events)", [{ name: "origin", operator: "isNull" }]],
    ["an event field the pages do not hold", [{ name: "name", operator: "is", value: ["purchase"] }]],
    [
      "all three kinds together",
      [
        { name: "device", operator: "isNot", value: ["tablet"] },
        { name: "path", operator: "contains", value: ["i"] },
        { name: "properties.nested.variant", operator: "is", value: ["B"] },
      ],
    ],
  ];

  it.each(PAGE_FILTER_CASES)("pages with %s", async (_label, filters) => {
    const response = await get<unknown[]>("pages", { ...RANGE, filters: JSON.stringify(filters) });
    expect(response.status).toBe(200);
    const expected = referencePages(traffic, {
      projectId: tenant.projectId,
      start: utc("2026-03-20T00:00:00Z"),
      end: utc("2026-04-06T00:00:00Z"),
      filters,
    });
    expect(expected.length).toBeGreaterThan(0);
    expect(response.body).toEqual(expected);
  });

  const DIMENSIONS = [
    "referrer",
    "referrer_name",
    "referrer_type",
    "country",
    "region",
    "city",
    "device",
    "brand",
    "model",
    "browser",
    "browser_version",
    "os",
    "os_version",
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
  ];

  it.each(DIMENSIONS)("%s: every row, in order", async (dimension) => {
    const response = await get(dimension, { ...RANGE, timezone: "Europe/Oslo" });
    expect(response.status).toBe(200);
    const expected = referenceBreakdown(
      traffic,
      { projectId: tenant.projectId, start: utc("2026-03-19T23:00:00Z"), end: utc("2026-04-05T22:00:00Z") },
      dimension,
    );
    expect(response.body).toEqual(expected);
  });

  it("a breakdown with a filter", async () => {
    const filters: RawFilter[] = [{ name: "properties.plan", operator: "contains", value: ["pro"] }];
    const response = await get("country", { ...RANGE, filters: JSON.stringify(filters) });
    const expected = referenceBreakdown(
      traffic,
      {
        projectId: tenant.projectId,
        start: utc("2026-03-20T00:00:00Z"),
        end: utc("2026-04-06T00:00:00Z"),
        filters,
      },
      "country",
    );
    expect(response.body).toEqual(expected);
  });

  it.each(["pages", "city", "browser_version"])(
    "%s: the pages joined equal the unpaged list",
    async (path) => {
      const whole = await get<unknown[]>(path, RANGE);
      const joined: unknown[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const response = await get<unknown[]>(path, { ...RANGE, limit: "3", cursor });
        expect(response.status).toBe(200);
        joined.push(...response.body);
        const next = response.headers.get("x-next-cursor") ?? undefined;
        if (next) {
          const link = response.headers.get("link") ?? "";
          expect(link).toMatch(/^<http:\/\/api\.test\/insights\/[^>]+cursor=[^>]+>; rel="next"$/);
          expect(new URL(link.slice(1, link.indexOf(">"))).searchParams.get("cursor")).toBe(next);
        }
        cursor = next;
        pages++;
      } while (cursor && pages < 100);
      expect(pages).toBe(Math.ceil(whole.body.length / 3));
      expect(joined).toEqual(whole.body);
    },
  );

  it("unknown dimensions are 404 NOT_FOUND", async () => {
    expectProblem(await get("favourite_colour"), 404, "NOT_FOUND");
  });
});

describe("bad input is a 400 naming the parameter", () => {
  const CASES: Array<[string, string, Record<string, string>]> = [
    ["metrics", "range", { range: "fortnight" }],
    ["metrics", "endDate", { startDate: "2026-01-01" }],
    ["metrics", "startDate", { endDate: "2026-01-01" }],
    ["metrics", "startDate", { startDate: "2026-13-01", endDate: "2026-12-01" }],
    ["metrics", "startDate", { startDate: "2026-03-02", endDate: "2026-03-01" }],
    ["metrics", "endDate", { startDate: "2026-01-01", endDate: "2026-13-01" }],
    ["metrics", "timezone", { timezone: "Mars/Olympus_Mons" }],
    ["metrics", "interval", { interval: "fortnight" }],
    ["metrics", "interval", { startDate: "2026-01-01", endDate: "2026-12-31", interval: "hour" }],
    ["metrics", "previous", { previous: "yes" }],
    ["metrics", "filters", { filters: "{not json" }],
    ["metrics", "filters", { filters: '{"name":"path"}' }],
    ["metrics", "filters/0/name", { filters: '[{"name":"colour","operator":"is","value":["x"]}]' }],
    ["metrics", "filters/0/operator", { filters: '[{"name":"path","operator":"like","value":["x"]}]' }],
    ["metrics", "filters/0/value", { filters: '[{"name":"path","operator":"is","value":"x"}]' }],
    ["metrics", "filters/0/value", { filters: '[{"name":"path","operator":"regex","value":["(unclosed"]}]' }],
    ["pages", "limit", { limit: "0" }],
    ["pages", "limit", { limit: "1001" }],
    ["pages", "limit", { limit: "ten" }],
    ["pages", "cursor", { cursor: "not-a-cursor" }],
    ["country", "limit", { limit: "-1" }],
    [
      "country",
      "filters/1/operator",
      { filters: '[{"name":"os","operator":"is","value":["iOS"]},{"name":"os","operator":"nope"}]' },
    ],
  ];

  it.each(CASES)("/%s → %s", async (path, parameter, params) => {
    expectProblem(await get(path, params), 400, "VALIDATION_FAILED", parameter);
  });

  it("a cursor from another query is refused", async () => {
    const first = await get("pages", { startDate: "2026-03-20", endDate: "2026-04-05", limit: "2" });
    const cursor = first.headers.get("x-next-cursor") ?? "";
    expect(cursor).not.toBe("");
    const replayed = await get("pages", {
      startDate: "2026-03-21",
      endDate: "2026-04-05",
      limit: "2",
      cursor,
    });
    expectProblem(replayed, 400, "VALIDATION_FAILED", "cursor");
  });
});
