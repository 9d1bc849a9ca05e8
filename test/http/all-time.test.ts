import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, credentialHeaders, insertEvents, type Tenant } from "../support/factories";
import { call, expectProblem, testDatabase } from "../support/worker/http";

// "All time" as a dashboard asks it: startDate=1970-01-01 and today. A window over two years starts
// at the local day of the project's first event, says so, and answers exactly what the clamped
// window answers.

const database = testDatabase();
let tenant: Tenant;
const ALL_TIME = "startDate=1970-01-01&endDate=2026-11-20";
const CLAMPED = "startDate=2026-10-03&endDate=2026-11-20";
// The first event at 23:30 UTC on 2 October: its day in UTC is the 2nd, the clamped start the 3rd
// only in a zone east of UTC. The project reports in UTC, so the window starts on 2 October.
const FIRST_EVENT = new Date("2026-10-02T23:30:00Z");

beforeAll(async () => {
  tenant = await createTenant(database.db);
  await insertEvents(
    database.db,
    [FIRST_EVENT, new Date("2026-10-15T10:00:00Z"), new Date("2026-11-19T08:00:00Z")].map(
      (createdAt, index) => ({
        projectId: tenant.projectId,
        sessionId: `all-time-${index}`,
        country: index === 1 ? "SE" : "NO",
        revenue: index * 100,
        createdAt,
      }),
    ),
  );
});
afterAll(() => database.close());

const get = <T>(path: string) => call<T>(path, { headers: credentialHeaders(tenant.read) });

interface MetricsBody {
  metrics: Record<string, number>;
  series: Array<Record<string, unknown>>;
  meta: Record<string, unknown>;
}

describe("a window over two years", () => {
  it("/metrics starts at the first event's local day and names the start asked for", async () => {
    const all = await get<MetricsBody>(`/insights/${tenant.projectId}/metrics?${ALL_TIME}&interval=day`);
    expect(all.status).toBe(200);
    expect(all.body.meta).toMatchObject({
      startDate: "2026-10-02T00:00:00Z",
      requestedStartDate: "1970-01-01T00:00:00Z",
      endDate: "2026-11-20T23:59:59.999Z",
    });
    expect(all.body.series).toHaveLength(50);
    expect(all.body.metrics).toMatchObject({ total_sessions: 3, total_revenue: 300 });
    const same = await get<MetricsBody>(
      `/insights/${tenant.projectId}/metrics?startDate=2026-10-02&endDate=2026-11-20&interval=day`,
    );
    expect(all.body.metrics).toEqual(same.body.metrics);
    expect(all.body.series).toEqual(same.body.series);
    expect(same.body.meta.requestedStartDate).toBeUndefined();
  });

  it("in a zone east of UTC the start is the first event's day there", async () => {
    const oslo = await get<MetricsBody>(
      `/insights/${tenant.projectId}/metrics?${ALL_TIME}&timezone=Europe/Oslo&interval=day`,
    );
    expect(oslo.body.meta).toMatchObject({
      startDate: "2026-10-03T00:00:00+02:00",
      requestedStartDate: "1970-01-01T00:00:00+01:00",
    });
    const same = await get<MetricsBody>(
      `/insights/${tenant.projectId}/metrics?${CLAMPED}&timezone=Europe/Oslo&interval=day`,
    );
    expect(oslo.body.metrics).toEqual(same.body.metrics);
  });

  it("a breakdown answers the clamped window's rows and says so in a header", async () => {
    const all = await get<unknown[]>(`/insights/${tenant.projectId}/country?${ALL_TIME}`);
    expect(all.status).toBe(200);
    expect(all.headers.get("x-window-start")).toBe("2026-10-02T00:00:00Z");
    expect(all.headers.get("x-requested-window-start")).toBe("1970-01-01T00:00:00Z");
    expect(all.body).toEqual([
      { name: "NO", sessions: 2, pageviews: 2, bounce_rate: 100, avg_session_duration: 0, revenue: 200 },
      { name: "SE", sessions: 1, pageviews: 1, bounce_rate: 100, avg_session_duration: 0, revenue: 100 },
    ]);
    const short = await get<unknown[]>(`/insights/${tenant.projectId}/country?${CLAMPED}`);
    expect(short.headers.get("x-requested-window-start")).toBeNull();
  });

  it("/export/charts states it in meta", async () => {
    const series = encodeURIComponent(JSON.stringify([{ name: "screen_view" }]));
    const chart = await get<{ meta: Record<string, unknown>; series: Array<{ data: unknown[] }> }>(
      `/export/charts?projectId=${tenant.projectId}&series=${series}&${ALL_TIME}&interval=week`,
    );
    expect(chart.status).toBe(200);
    expect(chart.body.meta).toMatchObject({
      startDate: "2026-10-02T00:00:00Z",
      requestedStartDate: "1970-01-01T00:00:00Z",
    });
    expect(chart.body.series[0]?.data).toHaveLength(8);
  });

  it("of a project without events keeps its start: the bucket limit decides", async () => {
    const empty = await createTenant(database.db);
    const headers = { headers: credentialHeaders(empty.read) };
    const monthly = await call<MetricsBody>(`/insights/${empty.projectId}/metrics?${ALL_TIME}`, headers);
    expect(monthly.status).toBe(200);
    expect(monthly.body.meta).toMatchObject({ startDate: "1970-01-01T00:00:00Z", interval: "month" });
    expect(monthly.body.meta.requestedStartDate).toBeUndefined();
    const daily = await call(`/insights/${empty.projectId}/metrics?${ALL_TIME}&interval=day`, headers);
    expectProblem(daily, 400, "VALIDATION_FAILED", "interval");
  });
});
