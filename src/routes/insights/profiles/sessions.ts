import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { ApiError } from "../../../lib/errors";
import { normalizeFilters } from "../../../lib/filter-parser";
import { validate } from "../../../middleware/validate";
import { profileExists } from "../../../queries/listings/profile";
import { listSessions } from "../../../queries/listings/sessions";
import { SessionRowSchema } from "../../../schemas/listings";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../../openapi";
import { CursorParam, LimitParam, RangeParams } from "../../params";
import { answerListing } from "../listing";
import { resolveLifetimeScope, sessionScopeOf } from "../scope";

const ProfileSessionsQuery = v.object({
  ...RangeParams,
  limit: LimitParam(20, 100),
  cursor: CursorParam,
});

export const profileSessions = new Hono<AppEnv>().get(
  "/:projectId/profiles/:profileId/sessions",
  describeRoute({
    operationId: "listProfileSessions",
    tags: ["Listings"],
    summary: "One profile's sessions, newest first",
    description:
      "The sessions whose visitor is the profile and whose first event lies in the window (lifetime by default), as `/sessions` lists them; `filters` are session-scoped. `404 NOT_FOUND` with `profileId` when no stored event carries the id.",
    responses: cachedAnswerResponses({
      description: "Session rows",
      schema: v.array(SessionRowSchema),
      headers: LIST_RESPONSE_HEADERS,
      more: ["NOT_FOUND"],
    }),
  }),
  validate("query", ProfileSessionsQuery),
  (c) => {
    const query = c.req.valid("query");
    const projectId = c.get("project").id;
    const profileId = c.req.param("profileId");
    const scope = resolveLifetimeScope(c, query);
    const filters = [
      ...scope.filters,
      ...normalizeFilters([{ name: "profile_id", operator: "is", value: [profileId] }]),
    ];
    return answerListing(c, {
      route: "profiles/sessions",
      scope,
      filters,
      inputs: { profileId },
      limit: query.limit,
      cursor: query.cursor,
      read: async (db, page) => {
        if (!(await profileExists(db, projectId, profileId))) throw ApiError.profileNotFound(profileId);
        return listSessions(db, { ...sessionScopeOf(scope, projectId), filters }, page);
      },
    });
  },
);
