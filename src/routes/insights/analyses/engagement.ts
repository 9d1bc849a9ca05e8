import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { dayNumberDate, localDayNumber } from "../../../lib/timezone";
import { validate } from "../../../middleware/validate";
import { engagementDistribution } from "../../../queries/analyses/engagement";
import { type EngagementResponse, EngagementResponseSchema } from "../../../schemas/analyses";
import { cachedAnswerResponses } from "../../openapi";
import { RangeParams } from "../../params";
import { answerObject } from "../object-answer";
import { activitySource, resolveLifetimeScope } from "../scope";

const EngagementQuery = v.object({ ...RangeParams });

/** The summary's buckets of days since the last activity (contract A6). */
function engagementSummary(
  distribution: Array<{ days: number; users: number }>,
): EngagementResponse["summary"] {
  const within = (from: number, to: number) =>
    distribution.filter((row) => row.days >= from && row.days <= to).reduce((sum, row) => sum + row.users, 0);
  const summary = {
    active_last_7_days: within(0, 7),
    active_8_to_14_days: within(8, 14),
    active_15_to_30_days: within(15, 30),
    inactive_31_to_60_days: within(31, 60),
    churned_60_plus_days: within(61, Number.POSITIVE_INFINITY),
  };
  return {
    total_identified_users: Object.values(summary).reduce((sum, users) => sum + users, 0),
    ...summary,
  };
}

export const engagementRoute = new Hono<AppEnv>().get(
  "/:projectId/engagement",
  describeRoute({
    operationId: "getEngagement",
    tags: ["Analyses"],
    summary: "Identified users by days since their last activity",
    description:
      "Each identified user's last activity is its latest identified event (profile_id ≠ device_id) in the window (default: the whole history) that passes the filters; `days` counts local calendar days from that event's day to the reference day: today, or the window's last day when it ends earlier.",
    responses: cachedAnswerResponses({ description: "Engagement", schema: EngagementResponseSchema }),
  }),
  validate("query", EngagementQuery),
  (c) => {
    const query = c.req.valid("query");
    const scope = resolveLifetimeScope(c, query);
    const { timezone, window } = scope.range;
    const referenceDay = localDayNumber(Math.min(Date.now(), window.end - 1), timezone);
    const referenceDate = dayNumberDate(referenceDay);
    return answerObject(c, {
      route: "engagement",
      scope,
      inputs: { referenceDay },
      meta: { referenceDate },
      compute: async (db): Promise<Omit<EngagementResponse, "meta">> => {
        const distribution = await engagementDistribution(db, {
          ...activitySource(c.get("project").id, scope),
          window: scope.lifetime ? undefined : window,
          referenceDay,
        });
        return { summary: engagementSummary(distribution), distribution };
      },
    });
  },
);
