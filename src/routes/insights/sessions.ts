import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { normalizeFilters } from "../../lib/filter-parser";
import { validate } from "../../middleware/validate";
import { listSessions } from "../../queries/listings/sessions";
import { SessionRowSchema } from "../../schemas/listings";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { CursorParam, LimitParam, RangeParams } from "../params";
import { ATTRIBUTE_PARAMS, exactColumnFilters, exactColumnParams } from "./column-params";
import { answerListing } from "./listing";
import { resolveInsightsScope, sessionScopeOf } from "./scope";

/** The parameters that match one attribute of the session exactly (its first event's), and its visitor. */
const COLUMN_PARAMS = ATTRIBUTE_PARAMS;

const SessionsQuery = v.object({
  ...RangeParams,
  ...exactColumnParams(COLUMN_PARAMS, "sessions"),
  limit: LimitParam(20, 100),
  cursor: CursorParam,
});

export const sessionListing = new Hono<AppEnv>().get(
  "/:projectId/sessions",
  describeRoute({
    operationId: "listSessions",
    tags: ["Listings"],
    summary: "Sessions, newest first",
    description:
      "The sessions whose first event lies in the window (default `30d`), one row each, by start then id, both descending. The column parameters match the session's attributes (its first event's) exactly, `profileId` its visitor; `filters` are session-scoped (contract section 3). Paged by keyset: `Link`/`X-Next-Cursor` lead to the next page.",
    responses: cachedAnswerResponses({
      description: "Session rows",
      schema: v.array(SessionRowSchema),
      headers: LIST_RESPONSE_HEADERS,
    }),
  }),
  validate("query", SessionsQuery),
  (c) => {
    const query = c.req.valid("query");
    const exact = exactColumnFilters(COLUMN_PARAMS, query);
    const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
    const filters = [...scope.filters, ...normalizeFilters(exact)];
    const sessionScope = { ...sessionScopeOf(scope, c.get("project").id), filters };
    return answerListing(c, {
      route: "sessions",
      scope,
      filters,
      inputs: { exact },
      limit: query.limit,
      cursor: query.cursor,
      read: (db, page) => listSessions(db, sessionScope, page),
    });
  },
);
