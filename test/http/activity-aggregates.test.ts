import { describe, expect, it } from "vitest";
import {
  localDayNumber,
  localWeek,
  referenceActiveUsers,
  referenceCohorts,
  referenceEngagement,
  referenceWeeklyReturn,
} from "../support/analyses-reference";
import { useTrafficTenant } from "../support/worker/traffic-tenant";

/**
 * /active_users, /retention/cohort, /retention and /engagement of a project in a timezone with
 * daylight saving time, asked in that timezone (the default): they read the per-profile activity
 * aggregates (src/db/schema/profile-activity.ts) built in the project's local days, which must
 * give what the reference counts from the raw events; asked in another timezone, the exact paths.
 */

const DAY = 86_400_000;
const ZONE = "Europe/Oslo";
const now = Date.now();
const { traffic, projectId, get } = useTrafficTenant({
  seed: 7373,
  sessions: 600,
  from: now - 110 * DAY,
  to: now,
  projectTimezone: ZONE,
});

const isoDay = (day: number) => new Date(day * DAY).toISOString().slice(0, 10);
const windowEnd = (response: { headers: Headers }) =>
  Date.parse(response.headers.get("x-window-end") ?? "") + 1;

describe("the activity aggregates in the project's timezone", () => {
  it.each([
    ["DAU of identified users", 1, true],
    ["MAU", 30, false],
    ["90-day actives", 90, false],
  ])("/active_users: %s over 60 days", async (_label, days, identified) => {
    const today = localDayNumber(Date.now(), ZONE);
    const response = await get<{ series: unknown[] }>("active_users", {
      startDate: isoDay(today - 60),
      endDate: isoDay(today),
      days: String(days),
      ...(identified ? { identified: "true" } : {}),
    });
    expect(response.status).toBe(200);
    const expected = referenceActiveUsers(traffic(), {
      projectId: projectId(),
      timezone: ZONE,
      days,
      firstDay: today - 60,
      lastDay: today,
      identified,
    });
    expect(expected).toHaveLength(61);
    expect(response.body.series).toEqual(expected);
  });

  it.each(["on_or_after", "on"] as const)("/retention/cohort criteria=%s, 13 weeks", async (criteria) => {
    const response = await get<unknown[]>("retention/cohort", { criteria });
    expect(response.status).toBe(200);
    const currentWeek = localWeek(Date.now(), ZONE);
    const expected = referenceCohorts(traffic(), {
      projectId: projectId(),
      timezone: ZONE,
      firstWeek: currentWeek - 12,
      lastWeek: currentWeek,
      currentWeek,
      until: windowEnd(response),
      criteria,
    });
    // Some cohort (the rows after the weighted average) has a member back in a later week: the
    // traffic is drawn relative to now, so which cohort that is moves with the date.
    const cohorts = expected.slice(1);
    expect(cohorts.some((row) => row.values.slice(1).some((users) => users > 0))).toBe(true);
    expect(response.body).toEqual(expected);
  });

  it("/retention/cohort over a window that ends before the last activity", async () => {
    const currentWeek = localWeek(Date.now(), ZONE);
    const monday = (week: number) => isoDay(week * 7 - 3);
    const response = await get<unknown[]>("retention/cohort", {
      startDate: monday(currentWeek - 10),
      endDate: isoDay(currentWeek * 7 - 3 - 22),
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      referenceCohorts(traffic(), {
        projectId: projectId(),
        timezone: ZONE,
        firstWeek: currentWeek - 10,
        lastWeek: currentWeek - 4,
        currentWeek,
        until: windowEnd(response),
        criteria: "on_or_after",
      }),
    );
  });

  it("/retention, 13 weeks", async () => {
    const response = await get<unknown[]>("retention");
    const currentWeek = localWeek(Date.now(), ZONE);
    const expected = referenceWeeklyReturn(traffic(), {
      projectId: projectId(),
      timezone: ZONE,
      firstWeek: currentWeek - 12,
      lastWeek: currentWeek,
      currentWeek,
    });
    expect(expected.some((row) => row.retained_users > 0)).toBe(true);
    expect(response.body).toEqual(expected);
  });

  it.each([
    ["the project's timezone (the aggregates)", undefined],
    ["another timezone (the profile summaries)", "America/Los_Angeles"],
  ])("/engagement over the whole history in %s", async (_label, timezone) => {
    const zone = timezone ?? ZONE;
    const response = await get<{ distribution: unknown[] }>("engagement", timezone ? { timezone } : {});
    expect(response.status).toBe(200);
    const expected = referenceEngagement(traffic(), {
      projectId: projectId(),
      timezone: zone,
      referenceDay: localDayNumber(Date.now(), zone),
    });
    expect(expected.length).toBeGreaterThan(30);
    expect(response.body.distribution).toEqual(expected);
  });
});
