import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { ApiError } from "../../../lib/errors";
import { validate } from "../../../middleware/validate";
import { listEvents } from "../../../queries/listings/events";
import { findProfile } from "../../../queries/listings/profile";
import { ProfileDetailSchema } from "../../../schemas/profiles";
import { cachedAnswerResponses } from "../../openapi";
import { RangeParams, WholeNumberParam } from "../../params";
import { answerObject } from "../object-answer";
import { resolveLifetimeScope } from "../scope";

const ProfileQuery = v.object({
  ...RangeParams,
  eventLimit: v.optional(
    WholeNumberParam(
      "eventLimit",
      100,
      "How many of its newest events `recentEvents` holds, 1–100 (default 20).",
    ),
    "20",
  ),
});

export const profileDetail = new Hono<AppEnv>().get(
  "/:projectId/profiles/:profileId",
  describeRoute({
    operationId: "getProfile",
    tags: ["Listings"],
    summary: "One profile and its newest events",
    description:
      "The profile row (first and last event ever, whether it identified, the stored record) and its newest events of the window (lifetime by default) that pass every filter. `404 NOT_FOUND` with `profileId` when no stored event carries the id.",
    responses: cachedAnswerResponses({
      description: "The profile",
      schema: ProfileDetailSchema,
      more: ["NOT_FOUND"],
    }),
  }),
  validate("query", ProfileQuery),
  async (c) => {
    const query = c.req.valid("query");
    const projectId = c.get("project").id;
    const profileId = c.req.param("profileId");
    const scope = resolveLifetimeScope(c, query);
    return answerObject(c, {
      route: "profile",
      scope,
      inputs: { profileId, eventLimit: query.eventLimit },
      compute: async (db) => {
        const profile = await findProfile(db, projectId, profileId);
        if (!profile) throw ApiError.profileNotFound(profileId);
        const { window } = scope.range;
        const events = await listEvents(
          db,
          { projectId, start: window.start, end: window.end, names: [], filters: scope.filters, profileId },
          { limit: query.eventLimit },
        );
        return { profile, recentEvents: events.map(({ position: _position, ...row }) => row) };
      },
    });
  },
);
