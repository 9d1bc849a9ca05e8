import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { percentOf } from "../../../lib/decimal";
import { validate } from "../../../middleware/validate";
import { FUNNEL_GROUPS, funnelLevels } from "../../../queries/analyses/funnel";
import { type FunnelResponse, FunnelResponseSchema, type FunnelStep } from "../../../schemas/analyses";
import { cachedAnswerResponses } from "../../openapi";
import { OneOfParam, RangeParams, StringListParam, WholeNumberParam } from "../../params";
import { answerObject } from "../object-answer";
import { resolveInsightsScope } from "../scope";

const FunnelQuery = v.object({
  ...RangeParams,
  steps: v.pipe(
    v.nonOptional(
      StringListParam(
        "steps",
        "2–10 event names in order (repeat the key, or a JSON array); duplicates allowed.",
      ),
      "steps is required: 2 to 10 event names",
    ),
    v.check((steps) => steps.length >= 2 && steps.length <= 10, "steps must hold 2 to 10 event names"),
    v.check((steps) => steps.every((step) => step.trim() !== ""), "a step must not be an empty name"),
  ),
  windowHours: v.optional(
    WholeNumberParam("windowHours", 720, "Hours from a group's first step to its last, 1–720 (default 24)."),
    "24",
  ),
  groupBy: v.optional(
    OneOfParam("groupBy", FUNNEL_GROUPS, "What a funnel user is: a session (default) or a profile."),
    "session_id",
  ),
});

/** The steps of the answer from users_k (contract A5). */
function funnelSteps(names: string[], users: number[]): FunnelStep[] {
  const first = users[0] ?? 0;
  const dropoffs = users.map((count, index) =>
    index + 1 < users.length ? count - (users[index + 1] ?? 0) : null,
  );
  const highest = Math.max(0, ...dropoffs.map((dropoff) => dropoff ?? 0));
  const highestAt = highest > 0 ? dropoffs.indexOf(highest) : -1;
  return names.map((eventName, index) => {
    const count = users[index] ?? 0;
    const dropoff = dropoffs[index] ?? null;
    return {
      step: index + 1,
      eventName,
      users: count,
      conversionRateFromStart: percentOf(count, first),
      dropoffCount: dropoff,
      dropoffPercent: dropoff === null ? null : percentOf(dropoff, count),
      isHighestDropoff: index === highestAt,
    };
  });
}

export const funnelRoute = new Hono<AppEnv>().get(
  "/:projectId/funnel",
  describeRoute({
    operationId: "getFunnel",
    tags: ["Analyses"],
    summary: "Funnel: how many get from the first step to each next one",
    description:
      "Groups (sessions, or profiles with `groupBy=profile_id`) of the window (default `30d`) by the furthest step they reached: events named as the steps in order, at strictly increasing times (equal timestamps never chain), the last within `windowHours` of the first, every one inside the window and passing the filters (event-scoped). Counts are cumulative and exact; rates are percent 0–100 with 2 decimals.",
    responses: cachedAnswerResponses({ description: "The funnel", schema: FunnelResponseSchema }),
  }),
  validate("query", FunnelQuery),
  (c) => {
    const query = c.req.valid("query");
    const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
    const funnel = { steps: query.steps, windowHours: query.windowHours, groupBy: query.groupBy };
    return answerObject(c, {
      route: "funnel",
      scope,
      inputs: funnel,
      meta: { groupBy: funnel.groupBy, windowHours: funnel.windowHours },
      compute: async (db): Promise<Omit<FunnelResponse, "meta">> => {
        const users = await funnelLevels(db, {
          projectId: c.get("project").id,
          window: scope.range.window,
          filters: scope.filters,
          ...funnel,
        });
        const steps = funnelSteps(funnel.steps, users);
        const total = users[0] ?? 0;
        const completed = users.at(-1) ?? 0;
        return {
          steps,
          totalUsers: total,
          completedUsers: completed,
          overallConversionRate: percentOf(completed, total),
        };
      },
    });
  },
);
