import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dayWindow,
  localMidnight,
  previousWindow,
  type RefChart,
  type RefChartRequest,
  type RefInterval,
  type RefSeries,
  type RefWindow,
  referenceChart,
} from "../support/chart-reference";
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
import type { RawEvent, RawFilter } from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { call, testDatabase } from "../support/worker/http";

/**
 * Differential tests: every `/export/charts` body is compared whole with the plain TypeScript
 * reference (test/support/chart-reference.ts) over the same raw events.
 */

const database = testDatabase();
let tenant: Tenant;
let traffic: RawEvent[];
let osloProjectId: string;
let osloClient: TestClient;

const utc = (text: string) => Date.parse(text);

beforeAll(async () => {
  tenant = await createTenant(database.db);
  const projectId = tenant.projectId;
  traffic = [
    // Around the spring DST change (Europe/Oslo 2026-03-29).
    ...generateTraffic({
      projectId,
      seed: 21,
      sessions: 240,
      from: utc("2026-03-14T00:00:00Z"),
      to: utc("2026-04-05T00:00:00Z"),
    }),
    // Around the autumn change (Europe/Oslo 2026-10-25).
    ...generateTraffic({
      projectId,
      seed: 22,
      sessions: 200,
      from: utc("2026-10-18T00:00:00Z"),
      to: utc("2026-11-03T00:00:00Z"),
    }),
    // Dense traffic inside two hours, for minute buckets.
    ...generateTraffic({
      projectId,
      seed: 23,
      sessions: 60,
      from: utc("2026-06-10T10:00:00Z"),
      to: utc("2026-06-10T12:00:00Z"),
    }),
    // Sparse traffic over the year, for month buckets.
    ...generateTraffic({
      projectId,
      seed: 24,
      sessions: 120,
      from: utc("2026-01-01T00:00:00Z"),
      to: utc("2027-01-01T00:00:00Z"),
    }),
  ];
  // Noise in a sibling project that must never be counted.
  const noise = generateTraffic({
    projectId: tenant.siblingProjectId,
    seed: 25,
    sessions: 40,
    from: utc("2026-03-20T00:00:00Z"),
    to: utc("2026-04-05T00:00:00Z"),
  });
  await insertEvents(database.db, [...traffic, ...noise] as EventInput[]);
  osloProjectId = await createProject(database.db, tenant.organizationId, { timezone: "Europe/Oslo" });
  osloClient = await createClient(database.db, {
    type: "read",
    organizationId: tenant.organizationId,
    projectId: osloProjectId,
  });
});
afterAll(() => database.close());

function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, value);
  return search.toString();
}

const get = <T>(params: Record<string, string | undefined>, headers: Record<string, string> = {}) =>
  call<T>(`/export/charts?${query(params)}`, {
    headers: { ...credentialHeaders(tenant.read), "Cache-Control": "no-cache", ...headers },
  });

interface ChartCase {
  series: RefSeries[];
  segment?: string;
  property?: string;
  breakdowns?: string[];
  filters?: RawFilter[];
  limit?: number;
  interval: RefInterval;
  timezone: string;
  /** `YYYY-MM-DD` (whole local days) or RFC 3339 to the second (inclusive end). */
  startDate: string;
  endDate: string;
  previous?: boolean;
}

function windowOf(startDate: string, endDate: string, timezone: string): RefWindow {
  if (/^\d{4}-\d{2}-\d{2}$/.test(startDate)) return dayWindow(startDate, endDate, timezone);
  return { start: utc(startDate), end: utc(endDate) + 1000 };
}

function paramsOf(chart: ChartCase): Record<string, string | undefined> {
  return {
    series: JSON.stringify(chart.series),
    segment: chart.segment,
    property: chart.property,
    breakdowns: chart.breakdowns ? JSON.stringify(chart.breakdowns.map((name) => ({ name }))) : undefined,
    filters: chart.filters ? JSON.stringify(chart.filters) : undefined,
    limit: chart.limit === undefined ? undefined : String(chart.limit),
    interval: chart.interval,
    timezone: chart.timezone,
    startDate: chart.startDate,
    endDate: chart.endDate,
    previous: chart.previous ? "true" : undefined,
  };
}

function expectedOf(chart: ChartCase): RefChart {
  const window = windowOf(chart.startDate, chart.endDate, chart.timezone);
  const request: RefChartRequest = {
    projectId: tenant.projectId,
    series: chart.series,
    segment: chart.segment,
    property: chart.property,
    breakdowns: chart.breakdowns,
    filters: chart.filters,
    limit: chart.limit,
    timezone: chart.timezone,
    interval: chart.interval,
    window,
    previous: chart.previous ? previousWindow(window, chart.timezone) : undefined,
  };
  return referenceChart(traffic, request);
}

/** Requests the chart and compares the whole body with the reference. */
async function expectChartMatchesReference(chart: ChartCase): Promise<RefChart> {
  const response = await get<RefChart>(paramsOf(chart));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body).toEqual(expectedOf(chart));
  return response.body;
}

const MARCH_UTC = {
  startDate: "2026-03-20",
  endDate: "2026-04-03",
  timezone: "UTC",
  interval: "day",
} as const;
const EVERY_KIND: RefSeries[] = [
  { name: "screen_view" },
  { name: "*" },
  { name: "purchase" },
  { name: "signup" },
];

describe("GET /export/charts: segments against the reference", () => {
  it.each(["event", "user", "session", "user_average", "one_event_per_user"])("%s", async (segment) => {
    const body = await expectChartMatchesReference({ ...MARCH_UTC, series: EVERY_KIND, segment });
    expect(body.series).toHaveLength(4);
    expect(body.series[0]?.data).toHaveLength(15);
    expect(body.metrics.sum).toBeGreaterThan(0);
    expect(body.meta).toEqual({
      startDate: "2026-03-20T00:00:00Z",
      endDate: "2026-04-03T23:59:59.999Z",
      timezone: "UTC",
      interval: "day",
      truncated: false,
    });
  });

  it.each(["property_sum", "property_average", "property_min", "property_max"])(
    "%s over a property with non-numeric values, revenue and duration",
    async (segment) => {
      const body = await expectChartMatchesReference({
        ...MARCH_UTC,
        segment,
        property: "properties.price",
        series: [
          { name: "*" },
          { name: "signup" },
          { name: "purchase", property: "revenue" },
          { name: "screen_view", property: "duration" },
          // No screen view has a price: a zero series.
          { name: "screen_view" },
        ],
      });
      expect(body.series.map((series) => series.metrics.sum).some((sum) => sum > 0)).toBe(true);
      expect(body.series.at(-1)?.metrics).toEqual({ sum: 0, average: 0, min: 0, max: 0 });
    },
  );

  it("a series' own segment overrides the top-level one", async () => {
    await expectChartMatchesReference({
      ...MARCH_UTC,
      segment: "user",
      series: [
        { name: "screen_view" },
        { name: "screen_view", segment: "session" },
        { name: "purchase", segment: "property_average", property: "revenue" },
      ],
    });
  });

  it("the events alias answers exactly as series", async () => {
    const chart = { ...MARCH_UTC, series: EVERY_KIND, segment: "user" };
    const { series, ...rest } = paramsOf(chart);
    const viaEvents = await get<RefChart>({ ...rest, events: series });
    expect(viaEvents.status).toBe(200);
    expect(viaEvents.body).toEqual(expectedOf(chart));
  });

  it("a chart with nothing to count is zero-filled", async () => {
    const body = await expectChartMatchesReference({
      ...MARCH_UTC,
      series: [{ name: "no_such_event" }],
    });
    expect(body.series[0]?.data.every((point) => point.count === 0)).toBe(true);
    expect(body.series[0]?.id).toBe("a1");
    expect(body.series[0]?.event).toEqual({ id: "a1", name: "no_such_event" });
  });
});

describe("GET /export/charts: intervals and time zones", () => {
  it("minute buckets with RFC 3339 bounds", async () => {
    const body = await expectChartMatchesReference({
      series: [{ name: "screen_view" }, { name: "*", segment: "user" }],
      interval: "minute",
      timezone: "UTC",
      startDate: "2026-06-10T10:15:00Z",
      endDate: "2026-06-10T11:44:59Z",
    });
    expect(body.series[0]?.data).toHaveLength(90);
  });

  it("hour buckets in Europe/Oslo on the spring DST day: 23 buckets", async () => {
    const body = await expectChartMatchesReference({
      series: [{ name: "*" }, { name: "screen_view", segment: "session" }],
      interval: "hour",
      timezone: "Europe/Oslo",
      startDate: "2026-03-29",
      endDate: "2026-03-29",
    });
    const dates = body.series[0]?.data.map((point) => point.date) ?? [];
    expect(dates).toHaveLength(23);
    expect(dates.slice(0, 3)).toEqual([
      "2026-03-29T00:00:00+01:00",
      "2026-03-29T01:00:00+01:00",
      "2026-03-29T03:00:00+02:00",
    ]);
  });

  it("hour buckets in Europe/Oslo on the autumn DST day: 25 buckets, paired with a 24-hour previous day", async () => {
    const body = await expectChartMatchesReference({
      series: [{ name: "*" }],
      interval: "hour",
      timezone: "Europe/Oslo",
      startDate: "2026-10-25",
      endDate: "2026-10-25",
      previous: true,
    });
    const data = body.series[0]?.data ?? [];
    expect(data).toHaveLength(25);
    expect(data[2]?.date).toBe("2026-10-25T02:00:00+02:00");
    expect(data[3]?.date).toBe("2026-10-25T02:00:00+01:00");
    // The previous period (2026-10-24) has 24 buckets: the 25th point has no partner.
    expect(data[23]?.previous).toBeDefined();
    expect(data[24]?.previous).toBeUndefined();
    expect(body.meta.previous).toEqual({
      startDate: "2026-10-24T00:00:00+02:00",
      endDate: "2026-10-24T23:59:59.999+02:00",
    });
  });

  it("day buckets in Europe/Oslo across the autumn change", async () => {
    const body = await expectChartMatchesReference({
      series: [{ name: "screen_view" }, { name: "purchase", segment: "property_sum", property: "revenue" }],
      interval: "day",
      timezone: "Europe/Oslo",
      startDate: "2026-10-20",
      endDate: "2026-11-01",
    });
    const dates = body.series[0]?.data.map((point) => point.date) ?? [];
    expect(dates).toHaveLength(13);
    expect(dates.slice(4, 7)).toEqual([
      "2026-10-24T00:00:00+02:00",
      "2026-10-25T00:00:00+02:00",
      "2026-10-26T00:00:00+01:00",
    ]);
  });

  it("week buckets start on Monday, before the window when it starts mid-week", async () => {
    const body = await expectChartMatchesReference({
      series: [{ name: "screen_view" }, { name: "*", segment: "one_event_per_user" }],
      interval: "week",
      timezone: "Europe/Oslo",
      startDate: "2026-03-18",
      endDate: "2026-04-05",
    });
    expect(body.series[0]?.data.map((point) => point.date)).toEqual([
      "2026-03-16T00:00:00+01:00",
      "2026-03-23T00:00:00+01:00",
      "2026-03-30T00:00:00+02:00",
    ]);
  });

  it.each(["UTC", "Europe/Oslo"])("month buckets over a year in %s", async (timezone) => {
    const body = await expectChartMatchesReference({
      series: [{ name: "*" }, { name: "*", segment: "user" }, { name: "signup", segment: "user_average" }],
      interval: "month",
      timezone,
      startDate: "2026-01-01",
      endDate: "2026-12-31",
    });
    expect(body.series[0]?.data).toHaveLength(12);
  });

  it("the project's time zone is the default, and the default range is 30d in daily buckets", async () => {
    const response = await get<RefChart>(
      { projectId: osloProjectId, series: JSON.stringify([{ name: "screen_view" }]) },
      credentialHeaders(osloClient),
    );
    expect(response.status).toBe(200);
    const { meta } = response.body;
    expect(meta.timezone).toBe("Europe/Oslo");
    expect(meta.interval).toBe("day");
    const start = Date.parse(meta.startDate);
    const end = Date.parse(meta.endDate) + 1;
    // 30 days back from the start of today, through the end of today.
    expect(start).toBe(localMidnight(meta.startDate.slice(0, 10), "Europe/Oslo"));
    expect(response.body.series[0]?.data).toHaveLength(31);
    expect(response.body).toEqual(
      referenceChart([], {
        projectId: osloProjectId,
        series: [{ name: "screen_view" }],
        timezone: "Europe/Oslo",
        interval: "day",
        window: { start, end },
      }),
    );
  });
});

describe("GET /export/charts: breakdowns, filters and the previous period", () => {
  it("one breakdown", async () => {
    const body = await expectChartMatchesReference({
      ...MARCH_UTC,
      series: [{ name: "screen_view" }, { name: "*", segment: "user" }],
      breakdowns: ["browser"],
    });
    const first = body.series[0];
    expect(first?.names).toHaveLength(2);
    expect(first?.id).toMatch(/^a[12]-[0-9a-f]{8}$/);
    expect(Object.keys(first?.event.breakdowns ?? {})).toEqual(["browser"]);
    expect(new Set(body.series.map((series) => series.id)).size).toBe(body.series.length);
  });

  it("two breakdowns, one of them a property with missing values", async () => {
    const body = await expectChartMatchesReference({
      ...MARCH_UTC,
      series: [{ name: "*" }, { name: "signup", segment: "one_event_per_user" }],
      breakdowns: ["country", "properties.plan"],
    });
    expect(body.series.some((series) => series.names.includes("(not set)"))).toBe(true);
    expect(body.series.some((series) => series.event.breakdowns?.["properties.plan"] === null)).toBe(true);
  });

  it("three breakdowns, session attributes read from the event, a camelCase name kept as given", async () => {
    await expectChartMatchesReference({
      ...MARCH_UTC,
      series: [{ name: "*" }],
      breakdowns: ["device", "referrerName", "properties.nested.variant"],
    });
  });

  it("a small limit keeps the largest breakdown series and says it truncated", async () => {
    const body = await expectChartMatchesReference({
      ...MARCH_UTC,
      series: [{ name: "*" }, { name: "screen_view", segment: "session" }],
      breakdowns: ["city", "device"],
      limit: 3,
    });
    expect(body.meta.truncated).toBe(true);
    expect(body.series).toHaveLength(6);
    const complete = await expectChartMatchesReference({
      ...MARCH_UTC,
      series: [{ name: "*" }, { name: "screen_view", segment: "session" }],
      breakdowns: ["city", "device"],
      limit: 500,
    });
    expect(complete.meta.truncated).toBe(false);
    expect(complete.series.length).toBeGreaterThan(6);
  });

  it("per-series filters, ANDed with the chart's filters", async () => {
    const body = await expectChartMatchesReference({
      ...MARCH_UTC,
      filters: [{ name: "device", operator: "isNot", value: ["tablet"] }],
      series: [
        { name: "*", filters: [{ name: "properties.plan", operator: "contains", value: ["pro"] }] },
        {
          name: "screen_view",
          segment: "session",
          filters: [
            { name: "country", operator: "is", value: ["NO", "SE"] },
            { name: "path", operator: "startsWith", value: ["/docs", "/100%"] },
          ],
        },
        {
          name: "purchase",
          segment: "property_max",
          property: "revenue",
          filters: [{ name: "revenue", operator: "gt", value: [2_000] }],
        },
        { name: "*", filters: [{ name: "utmSource", operator: "isNotNull" }] },
      ],
      breakdowns: ["os"],
    });
    expect(body.series.length).toBeGreaterThan(4);
  });

  it("filters on several columns and a breakdown of another: the event strings per day answer every counting segment", async () => {
    const body = await expectChartMatchesReference({
      ...MARCH_UTC,
      previous: true,
      filters: [
        { name: "device", operator: "isNot", value: ["tablet"] },
        { name: "country", operator: "is", value: ["NO", "SE", "US"] },
      ],
      series: [
        { name: "screen_view", filters: [{ name: "os", operator: "contains", value: ["OS"] }] },
        { name: "*" },
        { name: "purchase", segment: "user" },
        { name: "screen_view", segment: "session" },
      ],
      breakdowns: ["browser"],
    });
    expect(body.series.length).toBeGreaterThan(4);
    await expectChartMatchesReference({
      ...MARCH_UTC,
      interval: "week",
      startDate: "2026-03-16",
      endDate: "2026-04-05",
      filters: [
        { name: "referrerType", operator: "isNull" },
        { name: "browser", operator: "is", value: ["Chrome", "Safari"] },
        { name: "utm_source", operator: "isNotNull" },
      ],
      series: [{ name: "*" }, { name: "*", segment: "user" }, { name: "screen_view", segment: "session" }],
    });
  });

  it("previous=true in Europe/Oslo across the spring change: values, change and state", async () => {
    const body = await expectChartMatchesReference({
      series: [{ name: "screen_view" }, { name: "*", segment: "user_average" }, { name: "purchase" }],
      breakdowns: ["device"],
      interval: "day",
      timezone: "Europe/Oslo",
      startDate: "2026-03-27",
      endDate: "2026-04-02",
      previous: true,
    });
    expect(body.meta.previous).toEqual({
      startDate: "2026-03-20T00:00:00+01:00",
      endDate: "2026-03-26T23:59:59.999+01:00",
    });
    const states = new Set(
      body.series.flatMap((series) => series.data.map((point) => point.previous?.state ?? "none")),
    );
    expect(states).toEqual(new Set(["positive", "negative", "neutral"]));
    expect(body.series.some((series) => series.data.some((point) => point.previous?.change === null))).toBe(
      true,
    );
    expect(body.metrics.previous?.sum.value).toBeGreaterThan(0);
  });

  it("previous=true over a window that is not whole days, every segment kind", async () => {
    for (const segment of ["event", "one_event_per_user", "property_average"]) {
      await expectChartMatchesReference({
        series: [{ name: "*" }, { name: "screen_view", segment: "user" }],
        segment,
        property: "duration",
        interval: "minute",
        timezone: "UTC",
        startDate: "2026-06-10T11:00:00Z",
        endDate: "2026-06-10T11:59:59Z",
        previous: true,
      });
    }
    // The dense sessions start before 12:00 and last under an hour: nothing of them after 13:00.
    const body = await expectChartMatchesReference({
      series: [{ name: "*", filters: [{ name: "session_id", operator: "startsWith", value: ["ses-23-"] }] }],
      interval: "hour",
      timezone: "UTC",
      startDate: "2026-06-10T13:00:00Z",
      endDate: "2026-06-10T14:59:59Z",
      previous: true,
    });
    expect(body.series[0]?.metrics.sum).toBe(0);
    expect(body.series[0]?.metrics.previous?.sum.value).toBeGreaterThan(0);
    expect(body.series[0]?.metrics.previous?.sum.state).toBe("negative");
  });
});

describe("GET /export/charts: caching", () => {
  it("caches the answer in KV and revalidates with the ETag", async () => {
    const params = { ...paramsOf({ ...MARCH_UTC, series: [{ name: "signup" }] }), limit: "7" };
    const headers = { "Cache-Control": "" };
    const first = await get<RefChart>(params, headers);
    const second = await get<RefChart>(params, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-status")).toBe("analytics-kv; fwd=miss; stored");
    // A closed past window stays fresh for 24 h; one that reaches now for 60 s.
    const freshness = Date.now() < utc("2026-04-04T00:00:00Z") ? 60 : 86_400;
    expect(first.headers.get("cache-control")).toBe(`private, max-age=${freshness}`);
    expect(second.headers.get("cache-status")).toMatch(/^analytics-kv; hit; ttl=\d+; detail=memory$/);
    expect(second.body).toEqual(first.body);
    const etag = first.headers.get("etag") ?? "";
    expect(second.headers.get("etag")).toBe(etag);
    const notModified = await get(params, { ...headers, "If-None-Match": etag });
    expect(notModified.status).toBe(304);
  });
});
