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
  referenceBreakdown,
  referenceEntryExit,
  referenceMetrics,
  referencePagePerformance,
  referencePages,
} from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { call, expectProblem, testDatabase } from "../support/worker/http";

/**
 * OpenPanel's newer route names (contract A4, A8): `/overview` and `/traffic/*` give the numbers of
 * `/metrics` and the breakdowns for the same query, computed here from the raw events; groups and
 * saved reports are a 404 that says they are not supported.
 */

const database = testDatabase();
let tenant: Tenant;
let traffic: RawEvent[];
const utc = (text: string) => Date.parse(text);
// 17 UTC days; /metrics alone would pick daily buckets too, so the overview's default is tested
// on a longer window below.
const WINDOW = { startDate: "2026-05-01", endDate: "2026-05-17", timezone: "UTC" };
const SCOPE = () => ({
  projectId: tenant.projectId,
  start: utc("2026-05-01T00:00:00Z"),
  end: utc("2026-05-18T00:00:00Z"),
});

beforeAll(async () => {
  tenant = await createTenant(database.db);
  traffic = generateTraffic({
    projectId: tenant.projectId,
    seed: 41,
    sessions: 180,
    from: utc("2026-05-01T00:00:00Z"),
    to: utc("2026-05-18T00:00:00Z"),
  });
  // Pages seen once each, so the project has more pages than /pages answers by default.
  for (let i = 0; i < 8; i++) {
    const [first] = generateTraffic({
      projectId: tenant.projectId,
      seed: 50 + i,
      sessions: 1,
      from: utc("2026-05-02T00:00:00Z"),
      to: utc("2026-05-03T00:00:00Z"),
    });
    if (first) traffic.push({ ...first, path: `/extra-${i}`, name: "screen_view", revenue: i * 10 });
  }
  await insertEvents(database.db, traffic as EventInput[]);
});
afterAll(() => database.close());

const get = <T>(path: string, params: Record<string, string> = {}) =>
  call<T>(`/insights/${tenant.projectId}/${path}?${new URLSearchParams(params)}`, {
    headers: credentialHeaders(tenant.read),
  });

interface MetricsBody {
  metrics: Record<string, number>;
  series: Array<Record<string, unknown>>;
  previous?: { metrics: Record<string, number>; series: unknown[] };
  meta: Record<string, unknown>;
}
interface OverviewBody {
  summary: Record<string, number>;
  series: Array<Record<string, unknown>>;
  interval: string;
  startDate: string;
  endDate: string;
  previous?: { summary: Record<string, number>; series: unknown[] };
  meta: Record<string, unknown>;
}

describe("/overview", () => {
  it("is /metrics as summary and series, with the window at the top level", async () => {
    const overview = await get<OverviewBody>("overview", { ...WINDOW, previous: "true" });
    expect(overview.status).toBe(200);
    const metrics = await get<MetricsBody>("metrics", { ...WINDOW, interval: "day", previous: "true" });
    const days = Array.from({ length: 17 }, (_, i) => utc("2026-05-01T00:00:00Z") + i * 86_400_000);
    const expected = referenceMetrics(traffic, SCOPE(), days);
    expect(overview.body.summary).toEqual(expected.metrics);
    expect(overview.body.summary).toEqual(metrics.body.metrics);
    expect(overview.body.series).toEqual(metrics.body.series);
    expect(overview.body.series).toHaveLength(17);
    expect(overview.body.previous).toEqual({
      summary: metrics.body.previous?.metrics,
      series: metrics.body.previous?.series,
    });
    expect(overview.body).toMatchObject({
      interval: "day",
      startDate: "2026-05-01T00:00:00Z",
      endDate: "2026-05-17T23:59:59.999Z",
      meta: metrics.body.meta,
    });
    expect(Object.keys(overview.body).sort()).toEqual(
      ["endDate", "interval", "meta", "previous", "series", "startDate", "summary"].sort(),
    );
  });

  it("buckets by day unless told, where /metrics would pick weeks", async () => {
    const long = { startDate: "2026-03-01", endDate: "2026-06-30", timezone: "UTC" };
    const overview = await get<OverviewBody>("overview", long);
    const metrics = await get<MetricsBody>("metrics", long);
    expect(overview.body.interval).toBe("day");
    expect(overview.body.series).toHaveLength(122);
    expect(metrics.body.meta.interval).toBe("week");
    const weekly = await get<OverviewBody>("overview", { ...long, interval: "week" });
    expect(weekly.body.series).toEqual(metrics.body.series);
  });

  it("refuses a bad interval and more than 2,000 buckets like /metrics", async () => {
    expectProblem(
      await get("overview", { ...WINDOW, interval: "fortnight" }),
      400,
      "VALIDATION_FAILED",
      "interval",
    );
    expectProblem(
      await get("overview", { startDate: "2026-01-01", endDate: "2026-12-31", interval: "hour" }),
      400,
      "VALIDATION_FAILED",
      "interval",
    );
  });
});

describe("/pages/top", () => {
  it("is /pages with up to 1000 rows by default, each with the revenue of its screen views", async () => {
    const top = await get<Array<{ revenue: number }>>("pages/top", WINDOW);
    expect(top.status).toBe(200);
    const expected = referencePages(traffic, SCOPE());
    expect(expected.length).toBeGreaterThan(10);
    expect(top.body).toEqual(expected);
    expect(top.body.some((row) => row.revenue > 0)).toBe(true);
    const pages = await get<unknown[]>("pages", WINDOW);
    expect(pages.body).toEqual(expected.slice(0, 10));
    const paged = await get<unknown[]>("pages/top", { ...WINDOW, limit: "4" });
    const next = await get<unknown[]>("pages/top", {
      ...WINDOW,
      limit: "4",
      cursor: paged.headers.get("x-next-cursor") ?? "",
    });
    expect([...paged.body, ...next.body]).toEqual(expected.slice(0, 8));
  });

  it("under a filter, the revenue of the filtered sessions' screen views only", async () => {
    const filters = [{ name: "country", operator: "is", value: ["NO"] }];
    const top = await get<unknown[]>("pages/top", { ...WINDOW, filters: JSON.stringify(filters) });
    expect(top.body).toEqual(referencePages(traffic, { ...SCOPE(), filters }));
  });
});

describe("/pages/entry_exit", () => {
  it.each(["entry", "exit"] as const)(
    "mode=%s: sessions by their %s page, with all their screen views and revenue",
    async (mode) => {
      const response = await get<unknown[]>("pages/entry_exit", { ...WINDOW, mode });
      expect(response.status).toBe(200);
      const expected = referenceEntryExit(traffic, SCOPE(), mode);
      expect(expected.length).toBeGreaterThan(3);
      expect(response.body).toEqual(expected);
    },
  );

  it("in another timezone adds the edge hours to the whole days (rollups), or reads sessions (half-hour zones)", async () => {
    for (const [timezone, start, end] of [
      ["Europe/Oslo", "2026-05-02T22:00:00Z", "2026-05-09T22:00:00Z"],
      ["Asia/Kolkata", "2026-05-02T18:30:00Z", "2026-05-09T18:30:00Z"],
    ] as const) {
      const response = await get<unknown[]>("pages/entry_exit", {
        startDate: "2026-05-03",
        endDate: "2026-05-09",
        timezone,
        mode: "exit",
      });
      const expected = referenceEntryExit(traffic, { ...SCOPE(), start: utc(start), end: utc(end) }, "exit");
      expect(expected.length).toBeGreaterThan(3);
      expect(response.body).toEqual(expected);
    }
  });

  it("defaults to entry pages and pages by cursor", async () => {
    const expected = referenceEntryExit(traffic, SCOPE(), "entry");
    const first = await get<unknown[]>("pages/entry_exit", { ...WINDOW, limit: "2" });
    const rest = await get<unknown[]>("pages/entry_exit", {
      ...WINDOW,
      limit: "100",
      cursor: first.headers.get("x-next-cursor") ?? "",
    });
    expect([...first.body, ...rest.body]).toEqual(expected);
  });

  it("with a filter counts the filtered sessions only; a bad mode is a 400", async () => {
    const filters = [{ name: "device", operator: "is", value: ["mobile"] }];
    const response = await get<unknown[]>("pages/entry_exit", {
      ...WINDOW,
      mode: "exit",
      filters: JSON.stringify(filters),
    });
    expect(response.body).toEqual(referenceEntryExit(traffic, { ...SCOPE(), filters }, "exit"));
    expectProblem(
      await get("pages/entry_exit", { ...WINDOW, mode: "landing" }),
      400,
      "VALIDATION_FAILED",
      "mode",
    );
  });
});

describe("the window of the analyses contract's routes", () => {
  it.each(["overview", "pages/top", "pages/entry_exit", "pages/performance", "traffic/geo"])(
    "/%s defaults to the last 30 days",
    async (path) => {
      const thirty = await get<unknown[]>("country", { range: "30d" });
      const response = await get<{ startDate?: string; meta?: { startDate: string } }>(path);
      expect(response.status).toBe(200);
      const start = response.headers.get("x-window-start") ?? response.body.meta?.startDate;
      expect(start).toBe(thirty.headers.get("x-window-start"));
    },
  );
});

describe("/pages/performance", () => {
  interface PerformanceBody {
    total_pages: number;
    shown: number;
    pages: unknown[];
    meta: Record<string, unknown>;
  }
  const performance = (params: Record<string, string>) =>
    get<PerformanceBody>("pages/performance", { ...WINDOW, ...params });

  it.each([
    [{}, { sortBy: "sessions", sortOrder: "desc" }],
    [
      { sortBy: "avg_duration", sortOrder: "asc" },
      { sortBy: "avg_duration", sortOrder: "asc" },
    ],
    [{ sortBy: "bounce_rate" }, { sortBy: "bounce_rate", sortOrder: "desc" }],
    [
      { sortBy: "pageviews", sortOrder: "asc" },
      { sortBy: "pageviews", sortOrder: "asc" },
    ],
  ] as const)("sorts every page by %j, ties by path then origin", async (params, order) => {
    const response = await performance({ ...params, limit: "500" });
    expect(response.status).toBe(200);
    const expected = referencePagePerformance(traffic, SCOPE(), order);
    expect(response.body).toEqual({
      total_pages: expected.length,
      shown: expected.length,
      pages: expected,
      meta: {
        startDate: "2026-05-01T00:00:00Z",
        endDate: "2026-05-17T23:59:59.999Z",
        timezone: "UTC",
        hasMore: false,
      },
    });
  });

  it.each(["shop", "Pric", "%_off", "/extra-1", "no such page"])(
    "search=%s matches path, origin or title literally",
    async (search) => {
      const response = await performance({ search });
      const expected = referencePagePerformance(traffic, SCOPE(), {
        search,
        sortBy: "sessions",
        sortOrder: "desc",
      });
      expect(response.body.total_pages).toBe(expected.length);
      expect(response.body.pages).toEqual(expected);
    },
  );

  it("pages with limit and cursor, and states the total past the last page", async () => {
    const expected = referencePagePerformance(traffic, SCOPE(), { sortBy: "sessions", sortOrder: "desc" });
    const first = await performance({ limit: "4" });
    expect(first.body).toMatchObject({ total_pages: expected.length, shown: 4, pages: expected.slice(0, 4) });
    expect(first.body.meta.hasMore).toBe(true);
    const rest: unknown[] = [];
    let cursor = first.headers.get("x-next-cursor");
    while (cursor) {
      const next = await performance({ limit: "4", cursor });
      expect(next.body.total_pages).toBe(expected.length);
      rest.push(...next.body.pages);
      cursor = next.headers.get("x-next-cursor");
    }
    expect([...first.body.pages, ...rest]).toEqual(expected);
  });

  it.each([
    ["sortBy", { sortBy: "title" }],
    ["sortOrder", { sortOrder: "up" }],
    ["limit", { limit: "501" }],
    ["search", { search: "x".repeat(201) }],
  ])("a bad %s is a 400 naming it", async (param, params) => {
    expectProblem(await performance(params), 400, "VALIDATION_FAILED", param);
  });
});

describe("/traffic/*", () => {
  it.each([
    ["referrers", undefined, "referrer_name"],
    ["referrers", "utm_source", "utm_source"],
    ["geo", undefined, "country"],
    ["geo", "city", "city"],
    ["devices", undefined, "device"],
    ["devices", "os_version", "os_version"],
  ])("/traffic/%s?breakdown=%s gives the %s rows, revenue included", async (group, breakdown, dimension) => {
    const response = await get<unknown[]>(`traffic/${group}`, {
      ...WINDOW,
      ...(breakdown ? { breakdown } : {}),
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(referenceBreakdown(traffic, SCOPE(), dimension));
    expect(response.headers.get("x-window-start")).toBe("2026-05-01T00:00:00Z");
  });

  it("a breakdown of another group is a 400 naming the choices", async () => {
    const response = await get("traffic/geo", { ...WINDOW, breakdown: "browser" });
    expectProblem(response, 400, "VALIDATION_FAILED", "breakdown");
    expect((response.body as { detail: string }).detail).toContain("country, region, city");
  });

  it("pages with limit and cursor; a cursor of /country is not one of its", async () => {
    const first = await get<unknown[]>("traffic/geo", { ...WINDOW, limit: "2" });
    expect(first.body).toHaveLength(2);
    const cursor = first.headers.get("x-next-cursor") ?? "";
    const second = await get<unknown[]>("traffic/geo", { ...WINDOW, limit: "2", cursor });
    expect([...first.body, ...second.body]).toEqual(
      referenceBreakdown(traffic, SCOPE(), "country").slice(0, 4),
    );
    const country = await get<unknown[]>("country", { ...WINDOW, limit: "2" });
    const foreign = country.headers.get("x-next-cursor") ?? "";
    expectProblem(
      await get("traffic/geo", { ...WINDOW, limit: "2", cursor: foreign }),
      400,
      "VALIDATION_FAILED",
      "cursor",
    );
  });
});

describe("groups and saved reports", () => {
  it.each([
    ["groups", "Groups are not supported by this API."],
    ["groups/types", "Groups are not supported by this API."],
    ["groups/team-1", "Groups are not supported by this API."],
    ["groups/team-1/members", "Groups are not supported by this API."],
    ["reports/r1/data", "Saved reports are not supported by this API."],
    ["reports/r1", "Saved reports are not supported by this API."],
  ])("/%s is a 404 that says so", async (path, detail) => {
    const response = await get(path);
    expectProblem(response, 404, "NOT_FOUND");
    expect(response.body).toMatchObject({ detail, message: detail });
  });

  it("still needs credentials and a readable project", async () => {
    expectProblem(await call(`/insights/${tenant.projectId}/groups`), 401, "UNAUTHENTICATED");
    const other = await call(`/insights/${tenant.otherProjectId}/reports/r1/data`, {
      headers: credentialHeaders(tenant.read),
    });
    expectProblem(other, 404, "PROJECT_NOT_FOUND");
  });
});
