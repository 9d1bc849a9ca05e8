import { describe, expect, it } from "vitest";
import { localWeek, referenceCohorts, referenceWeeklyReturn } from "../support/analyses-reference";
import { expectProblem } from "../support/worker/http";
import { useTrafficTenant } from "../support/worker/traffic-tenant";

/**
 * GET /insights/{projectId}/retention/cohort and /retention (contract A6): weekly cohorts by first
 * identified event ever and next-week return, against a reference over the raw events; immature
 * cells, empty cohorts, other timezones; every bad input a 400.
 */

const DAY = 86_400_000;
const now = Date.now();
const { traffic, projectId, get } = useTrafficTenant({
  seed: 9090,
  sessions: 600,
  from: now - 120 * DAY,
  to: now,
});

/** Start of a local Monday week as the answer's X-Window-Start states it. */
const windowStart = (response: { headers: Headers }) =>
  Date.parse(response.headers.get("x-window-start") ?? "");
const windowEnd = (response: { headers: Headers }) =>
  Date.parse(response.headers.get("x-window-end") ?? "") + 1;

describe("/retention/cohort", () => {
  it.each(["on_or_after", "on"] as const)(
    "criteria=%s over the current week and the 12 before it",
    async (criteria) => {
      const response = await get<unknown[]>("retention/cohort", { timezone: "UTC", criteria });
      expect(response.status).toBe(200);
      const currentWeek = localWeek(Date.now(), "UTC");
      const expected = referenceCohorts(traffic(), {
        projectId: projectId(),
        timezone: "UTC",
        firstWeek: currentWeek - 12,
        lastWeek: currentWeek,
        currentWeek,
        until: windowEnd(response),
        criteria,
      });
      expect(expected).toHaveLength(14);
      expect((expected[1] as { sum: number }).sum).toBeGreaterThan(0);
      expect(response.body).toEqual(expected);
      expect(localWeek(windowStart(response), "UTC")).toBe(currentWeek - 12);
    },
  );

  it("widens a window to whole weeks in the request timezone and honours filters", async () => {
    const zone = "America/Sao_Paulo";
    const filters = [{ name: "browser", operator: "is", value: ["Safari"] }];
    const start = new Date(now - 60 * DAY).toISOString().slice(0, 10);
    const end = new Date(now - 20 * DAY).toISOString().slice(0, 10);
    const response = await get<unknown[]>("retention/cohort", {
      startDate: start,
      endDate: end,
      timezone: zone,
      filters: JSON.stringify(filters),
    });
    expect(response.status).toBe(200);
    const firstWeek = localWeek(windowStart(response), zone);
    const lastWeek = localWeek(windowEnd(response) - 1, zone);
    expect(localWeek(Date.parse(`${start}T12:00:00Z`), zone)).toBe(firstWeek);
    expect(localWeek(Date.parse(`${end}T12:00:00Z`), zone)).toBe(lastWeek);
    expect(response.body).toEqual(
      referenceCohorts(traffic(), {
        projectId: projectId(),
        timezone: zone,
        firstWeek,
        lastWeek,
        currentWeek: localWeek(Date.now(), zone),
        until: windowEnd(response),
        criteria: "on_or_after",
        filters,
      }),
    );
  });

  it.each([
    ["criteria=always", { criteria: "always" }, "criteria"],
    ["more than 105 weeks", { startDate: "2024-01-01", endDate: "2026-01-31" }, "startDate"],
    ["a lone endDate", { endDate: "2026-01-31" }, "startDate"],
  ])("%s is a 400", async (_label, params, path) => {
    expectProblem(await get("retention/cohort", params), 400, "VALIDATION_FAILED", path);
  });
});

describe("/retention", () => {
  it("counts each week's identified users and those back the week after", async () => {
    const response = await get<unknown[]>("retention", { timezone: "UTC" });
    expect(response.status).toBe(200);
    const currentWeek = localWeek(Date.now(), "UTC");
    const expected = referenceWeeklyReturn(traffic(), {
      projectId: projectId(),
      timezone: "UTC",
      firstWeek: currentWeek - 12,
      lastWeek: currentWeek,
      currentWeek,
    });
    expect(expected.some((row) => row.retained_users > 0)).toBe(true);
    expect(expected.at(-1)).toMatchObject({ retained_users: 0, complete: false });
    expect(response.body).toEqual(expected);
  });

  it("in another timezone, with a filter", async () => {
    const zone = "Australia/Adelaide";
    const filters = [{ name: "device", operator: "isNot", value: ["desktop"] }];
    const response = await get<unknown[]>("retention", {
      range: "3m",
      timezone: zone,
      filters: JSON.stringify(filters),
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      referenceWeeklyReturn(traffic(), {
        projectId: projectId(),
        timezone: zone,
        firstWeek: localWeek(windowStart(response), zone),
        lastWeek: localWeek(windowEnd(response) - 1, zone),
        currentWeek: localWeek(Date.now(), zone),
        filters,
      }),
    );
  });
});
