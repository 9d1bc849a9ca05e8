import { describe, expect, it } from "vitest";
import { localDayNumber, referenceActiveUsers } from "../support/analyses-reference";
import { expectProblem } from "../support/worker/http";
import { useTrafficTenant } from "../support/worker/traffic-tenant";

/**
 * GET /insights/{projectId}/active_users (contract A6): one point per local day up to today, each
 * the distinct users of the `days` days up to it, against a reference that counts each point's
 * users directly from the raw events.
 */

const DAY = 86_400_000;
const now = Date.now();
const { traffic, projectId, get } = useTrafficTenant({
  seed: 4242,
  sessions: 500,
  from: now - 75 * DAY,
  to: now,
});

type ActiveBody = {
  window_days: number;
  label: string;
  series: Array<{ date: string; users: number }>;
  meta: unknown;
};

const activeUsers = (params: Record<string, string> = {}) => get<ActiveBody>("active_users", params);

const isoDay = (day: number) => new Date(day * DAY).toISOString().slice(0, 10);

describe("/active_users", () => {
  it("answers WAU per day of `30d` by default (the day 30 days ago through today)", async () => {
    const response = await activeUsers({ timezone: "UTC" });
    expect(response.status).toBe(200);
    const today = localDayNumber(Date.now(), "UTC");
    const expected = referenceActiveUsers(traffic(), {
      projectId: projectId(),
      timezone: "UTC",
      days: 7,
      firstDay: today - 30,
      lastDay: today,
    });
    expect(expected).toHaveLength(31);
    expect(Math.min(...expected.map((point) => point.users))).toBeGreaterThan(0);
    expect(response.body).toMatchObject({ window_days: 7, label: "WAU", series: expected });
  });

  it.each([
    ["DAU", "1", false, undefined],
    ["MAU of identified users", "30", true, undefined],
    ["45 days with a filter", "45", false, [{ name: "device", operator: "is", value: ["mobile"] }]],
  ])("answers %s in another timezone over a custom window", async (_label, days, identified, filters) => {
    const zone = "Asia/Tokyo";
    const today = localDayNumber(Date.now(), zone);
    const params = {
      startDate: isoDay(today - 40),
      endDate: isoDay(today - 10),
      timezone: zone,
      days,
      ...(identified ? { identified: "true" } : {}),
      ...(filters ? { filters: JSON.stringify(filters) } : {}),
    };
    const response = await activeUsers(params);
    expect(response.status).toBe(200);
    const expected = referenceActiveUsers(traffic(), {
      projectId: projectId(),
      timezone: zone,
      days: Number(days),
      firstDay: today - 40,
      lastDay: today - 10,
      identified,
      filters,
    });
    expect(response.body.series).toEqual(expected);
    expect(response.body.label).toBe({ "1": "DAU", "30": "MAU" }[days] ?? `${days}d active`);
  });

  it("stops at today when the window reaches into the future", async () => {
    const today = localDayNumber(Date.now(), "UTC");
    const response = await activeUsers({
      startDate: isoDay(today - 2),
      endDate: isoDay(today + 5),
      timezone: "UTC",
    });
    expect(response.body.series.map((point) => point.date)).toEqual([
      isoDay(today - 2),
      isoDay(today - 1),
      isoDay(today),
    ]);
  });

  it.each([
    ["days=0", { days: "0" }, "days"],
    ["days=91", { days: "91" }, "days"],
    ["identified=yes", { identified: "yes" }, "identified"],
    ["a reversed window", { startDate: "2026-05-02", endDate: "2026-05-01" }, "startDate"],
  ])("%s is a 400", async (_label, params, path) => {
    expectProblem(await activeUsers(params), 400, "VALIDATION_FAILED", path);
  });
});
