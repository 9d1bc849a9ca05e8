import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import {
  createClient,
  createOrganization,
  createTenant,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type Tenant,
  uniqueId,
} from "../support/factories";
import { type RawEvent, referenceMetrics } from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { call, testDatabase } from "../support/worker/http";

/**
 * Range presets through HTTP, against the real clock: the stated window must be the one an
 * independent UTC calendar computation gives (before or after the request, in case a minute or
 * day boundary passes in between), and the numbers must match the reference over that window.
 */

const database = testDatabase();
let tenant: Tenant;
let traffic: RawEvent[];
const DAY = 86_400_000;

beforeAll(async () => {
  tenant = await createTenant(database.db);
  const now = Date.now();
  traffic = [
    ...generateTraffic({
      projectId: tenant.projectId,
      seed: 21,
      sessions: 300,
      from: now - 800 * DAY,
      to: now - 40 * DAY,
    }),
    ...generateTraffic({
      projectId: tenant.projectId,
      seed: 22,
      sessions: 200,
      from: now - 40 * DAY,
      to: now - 2 * DAY,
    }),
    ...generateTraffic({
      projectId: tenant.projectId,
      seed: 23,
      sessions: 80,
      from: now - 2 * DAY,
      to: now - 60_000,
    }),
  ].filter((event) => event.createdAt.getTime() < now);
  await insertEvents(database.db, traffic as EventInput[]);
});
afterAll(() => database.close());

function utcDay(ms: number, offsetDays = 0): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + offsetDays);
}
function utcMonth(ms: number, offsetMonths = 0): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offsetMonths, 1);
}
function utcYear(ms: number, offsetYears = 0): number {
  return Date.UTC(new Date(ms).getUTCFullYear() + offsetYears, 0, 1);
}
const minute = (ms: number) => Math.floor(ms / 60_000) * 60_000;

/** [start, end) of each preset in UTC at `now`, computed with plain Date arithmetic. */
const EXPECTED: Record<string, (now: number) => [number, number]> = {
  "30min": (now) => [minute(now - 30 * 60_000), minute(now) + 60_000],
  lastHour: (now) => [minute(now - 60 * 60_000), minute(now) + 60_000],
  last24h: (now) => [minute(now - DAY), minute(now) + 60_000],
  today: (now) => [utcDay(now), utcDay(now, 1)],
  yesterday: (now) => [utcDay(now, -1), utcDay(now)],
  "7d": (now) => [utcDay(now, -7), utcDay(now, 1)],
  "30d": (now) => [utcDay(now, -30), utcDay(now, 1)],
  "3m": (now) => [utcMonth(now, -3), utcDay(now, 1)],
  "6m": (now) => [utcMonth(now, -6), utcDay(now, 1)],
  "12m": (now) => [utcMonth(now, -12), utcDay(now, 1)],
  monthToDate: (now) => [utcMonth(now), utcDay(now, 1)],
  lastMonth: (now) => [utcMonth(now, -1), utcMonth(now)],
  yearToDate: (now) => [utcYear(now), utcDay(now, 1)],
  lastYear: (now) => [utcYear(now, -1), utcYear(now)],
};

interface MetricsBody {
  metrics: Record<string, number>;
  series: Array<Record<string, number | string> & { date: string }>;
  meta: { startDate: string; endDate: string; timezone: string; interval: string };
}

describe("range presets on /metrics (UTC)", () => {
  it.each(Object.keys(EXPECTED))("%s: the window and every number", async (range) => {
    const before = Date.now();
    const response = await call<MetricsBody>(
      `/insights/${tenant.projectId}/metrics?range=${range}&timezone=UTC`,
      {
        headers: { ...credentialHeaders(tenant.read), "Cache-Control": "no-cache" },
      },
    );
    const after = Date.now();
    expect(response.status).toBe(200);
    const window: [number, number] = [
      Date.parse(response.body.meta.startDate),
      Date.parse(response.body.meta.endDate) + 1,
    ];
    const expectation = EXPECTED[range] as (now: number) => [number, number];
    expect([expectation(before), expectation(after)]).toContainEqual(window);

    const buckets = response.body.series.map((point) => Date.parse(point.date));
    const expected = referenceMetrics(
      traffic,
      { projectId: tenant.projectId, start: window[0], end: window[1] },
      buckets,
    );
    expect(response.body.metrics).toEqual(expected.metrics);
    expect(response.body.series.map(({ date: _date, ...rest }) => rest)).toEqual(expected.series);
  });

  it("defaults to 7d", async () => {
    const response = await call<MetricsBody>(`/insights/${tenant.projectId}/metrics?timezone=UTC`, {
      headers: credentialHeaders(tenant.read),
    });
    const now = Date.now();
    expect(Date.parse(response.body.meta.startDate)).toBe(
      (EXPECTED["7d"] as (n: number) => [number, number])(now)[0],
    );
  });
});

describe("the project's timezone", () => {
  it("is the default for presets and buckets; UTC when the project has none", async () => {
    const organizationId = await createOrganization(database.db);
    const projectId = uniqueId("oslo");
    await database.db
      .insert(projects)
      .values({ id: projectId, organizationId, name: "Oslo", timezone: "Europe/Oslo" });
    const client = await createClient(database.db, { type: "read", organizationId, projectId });
    const oslo = await call<MetricsBody>(
      `/insights/${projectId}/metrics?startDate=2026-07-01&endDate=2026-07-01`,
      {
        headers: credentialHeaders(client),
      },
    );
    expect(oslo.body.meta.timezone).toBe("Europe/Oslo");
    expect(oslo.body.meta.startDate).toBe("2026-07-01T00:00:00+02:00");
    const plain = await call<MetricsBody>(`/insights/${tenant.projectId}/metrics?range=today`, {
      headers: credentialHeaders(tenant.read),
    });
    expect(plain.body.meta.timezone).toBe("UTC");
  });
});

describe("metrics caching", () => {
  it("keeps closed past ranges for 24 h and ranges that reach now for 60 s", async () => {
    const headers = credentialHeaders(tenant.read);
    const closed = `/insights/${tenant.projectId}/metrics?startDate=2025-01-01&endDate=2025-01-31`;
    const first = await call(closed, { headers });
    const second = await call(closed, { headers });
    expect(first.headers.get("cache-control")).toBe("private, max-age=86400");
    expect(first.headers.get("cache-status")).toBe("analytics-kv; fwd=miss; stored");
    expect(second.headers.get("cache-status")).toMatch(
      /^analytics-kv; hit; ttl=(86399|86400); detail=memory$/,
    );
    expect(second.body).toEqual(first.body);

    const open = await call(`/insights/${tenant.projectId}/metrics?range=30d`, {
      headers: { ...headers, "Cache-Control": "no-cache" },
    });
    expect(open.headers.get("cache-control")).toBe("private, max-age=60");
  });

  it("keys on every input: other filters are a miss", async () => {
    const headers = credentialHeaders(tenant.read);
    const base = `/insights/${tenant.projectId}/metrics?startDate=2025-02-01&endDate=2025-02-28`;
    await call(base, { headers });
    const filtered = await call(
      `${base}&filters=${encodeURIComponent(JSON.stringify([{ name: "country", operator: "is", value: ["NO"] }]))}`,
      { headers },
    );
    expect(filtered.headers.get("cache-status")).toBe("analytics-kv; fwd=miss; stored");
    const otherZone = await call(`${base}&timezone=Asia/Tokyo`, { headers });
    expect(otherZone.headers.get("cache-status")).toBe("analytics-kv; fwd=miss; stored");
  });
});
