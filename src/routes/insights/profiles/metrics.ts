import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { ApiError } from "../../../lib/errors";
import { validate } from "../../../middleware/validate";
import { profileExists } from "../../../queries/listings/profile";
import { profileMetrics } from "../../../queries/listings/profile-metrics";
import { ProfileMetricsSchema } from "../../../schemas/profiles";
import { cachedAnswerResponses } from "../../openapi";
import { RangeParams } from "../../params";
import { answerObject } from "../object-answer";
import { resolveLifetimeScope } from "../scope";

const ProfileMetricsQuery = v.object({ ...RangeParams });

export const profileMetricsRoute = new Hono<AppEnv>().get(
  "/:projectId/profiles/:profileId/metrics",
  describeRoute({
    operationId: "getProfileMetrics",
    tags: ["Listings"],
    summary: "One profile's figures",
    description:
      "Figures of the profile's events of the window (lifetime by default) that pass the filters, and of the sessions it is the visitor of that start in the window (filters session-scoped). Durations in **minutes**, the time between sessions in **seconds**, `bounceRate` in percent (0–100), `revenue` in cents. `404 NOT_FOUND` with `profileId` when no stored event carries the id.",
    responses: cachedAnswerResponses({
      description: "The profile's figures",
      schema: ProfileMetricsSchema,
      more: ["NOT_FOUND"],
    }),
  }),
  validate("query", ProfileMetricsQuery),
  async (c) => {
    const query = c.req.valid("query");
    const projectId = c.get("project").id;
    const profileId = c.req.param("profileId");
    const scope = resolveLifetimeScope(c, query);
    return answerObject(c, {
      route: "profile/metrics",
      scope,
      inputs: { profileId },
      compute: async (db) => {
        if (!(await profileExists(db, projectId, profileId))) throw ApiError.profileNotFound(profileId);
        return profileMetrics(db, {
          projectId,
          profileId,
          window: scope.range.window,
          timezone: scope.range.timezone,
          filters: scope.filters,
        });
      },
    });
  },
);
