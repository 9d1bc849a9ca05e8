import { describe, expect, it } from "vitest";
import { localDayNumber, referenceEngagement } from "../support/analyses-reference";
import { expectProblem } from "../support/worker/http";
import { useTrafficTenant } from "../support/worker/traffic-tenant";

/**
 * GET /insights/{projectId}/engagement (contract A6): identified users by local days since their
 * last identified activity, from the profile summaries (whole history) and from the events (a
 * window, filters), against the reference over the raw events.
 */

const DAY = 86_400_000;
const now = Date.now();
const { traffic, projectId, get } = useTrafficTenant({
  seed: 515,
  sessions: 400,
  from: now - 100 * DAY,
  to: now - DAY,
});

type EngagementBody = {
  summary: Record<string, number>;
  distribution: Array<{ days: number; users: number }>;
  meta: Record<string, unknown>;
};

const engagement = (params: Record<string, string> = {}) => get<EngagementBody>("engagement", params);

/** The summary buckets of a distribution, as the contract words them. */
function summaryOf(rows: Array<{ days: number; users: number }>) {
  const sum = (keep: (days: number) => boolean) =>
    rows.filter((r) => keep(r.days)).reduce((s, r) => s + r.users, 0);
  return {
    total_identified_users: sum((d) => d >= 0),
    active_last_7_days: sum((d) => d >= 0 && d <= 7),
    active_8_to_14_days: sum((d) => d >= 8 && d <= 14),
    active_15_to_30_days: sum((d) => d >= 15 && d <= 30),
    inactive_31_to_60_days: sum((d) => d >= 31 && d <= 60),
    churned_60_plus_days: sum((d) => d > 60),
  };
}

describe("/engagement", () => {
  it("over the whole history counts every identified user by days since its last identified event", async () => {
    const response = await engagement({ timezone: "UTC" });
    expect(response.status).toBe(200);
    const today = localDayNumber(Date.now(), "UTC");
    const expected = referenceEngagement(traffic(), {
      projectId: projectId(),
      timezone: "UTC",
      referenceDay: today,
    });
    const summary = summaryOf(expected);
    expect(summary.active_last_7_days).toBeGreaterThan(0);
    expect(summary.churned_60_plus_days).toBeGreaterThan(0);
    expect(response.body).toEqual({
      summary,
      distribution: expected,
      meta: {
        startDate: null,
        endDate: expect.any(String),
        timezone: "UTC",
        referenceDate: new Date(today * DAY).toISOString().slice(0, 10),
      },
    });
  });

  it("in a window counts days to the window's last day, in the request timezone, with filters", async () => {
    const zone = "America/Los_Angeles";
    const end = new Date(now - 20 * DAY).toISOString().slice(0, 10);
    const start = new Date(now - 80 * DAY).toISOString().slice(0, 10);
    const filters = [{ name: "country", operator: "isNot", value: ["US"] }];
    const response = await engagement({
      startDate: start,
      endDate: end,
      timezone: zone,
      filters: JSON.stringify(filters),
    });
    expect(response.status).toBe(200);
    // The window's bounds as the answer states them: local midnights of the zone.
    const expected = referenceEngagement(traffic(), {
      projectId: projectId(),
      start: Date.parse(String(response.body.meta.startDate)),
      end: Date.parse(String(response.body.meta.endDate)) + 1,
      timezone: zone,
      filters,
      referenceDay: localDayNumber(Date.parse(String(response.body.meta.endDate)), zone),
    });
    expect(expected.length).toBeGreaterThan(3);
    expect(response.body.distribution).toEqual(expected);
    expect(response.body.summary).toEqual(summaryOf(expected));
    expect(response.body.meta.referenceDate).toBe(end);
  });

  it.each([
    ["a lone startDate", { startDate: "2026-01-01" }, "endDate"],
    ["an unknown timezone", { timezone: "Nowhere/City" }, "timezone"],
    ["a bad filter", { filters: '[{"name":"x","operator":"is","value":["a"]}]' }, "filters/0/name"],
  ])("%s is a 400", async (_label, params, path) => {
    expectProblem(await engagement(params), 400, "VALIDATION_FAILED", path);
  });
});
