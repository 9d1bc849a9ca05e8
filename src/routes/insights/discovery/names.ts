import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { nextPageHeaders } from "../../../lib/paging";
import { readThrough } from "../../../middleware/cache";
import { useDatabase } from "../../../middleware/database";
import { sendJson } from "../../../middleware/send-json";
import { validate } from "../../../middleware/validate";
import { eventNames } from "../../../queries/discovery/names";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../../openapi";
import { CursorParam, LimitParam } from "../../params";
import { offsetPage } from "../offset-page";
import { DiscoveryParams } from "./params";

const NamesQuery = v.object({
  ...DiscoveryParams,
  q: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, "q must be 1 to 100 characters"),
      v.maxLength(100, "q must be 1 to 100 characters"),
      v.description("Case-insensitive literal substring of the name (`%` and `_` are plain characters)."),
    ),
  ),
  limit: LimitParam(50),
  cursor: CursorParam,
});

/** How long a discovery answer is served from the cache: new names show within a minute. */
export const DISCOVERY_FRESH_SECONDS = 60;

export const eventNamesRoute = new Hono<AppEnv>().get(
  "/:projectId/events/names",
  describeRoute({
    operationId: "listEventNames",
    tags: ["Discovery"],
    summary: "Event names, most frequent first",
    description:
      "Every event name the project has stored (matching `q`), by the number of events over the whole history, then name. A bare array; `X-Total-Count` gives how many match, `Link`/`X-Next-Cursor` the next page. Window parameters are ignored; `filters` is a 400.",
    responses: cachedAnswerResponses({
      description: "Event names",
      schema: v.array(v.string()),
      headers: LIST_RESPONSE_HEADERS,
    }),
  }),
  validate("query", NamesQuery),
  async (c) => {
    const query = c.req.valid("query");
    const projectId = c.get("project").id;
    const {
      page,
      cacheKey: key,
      next: nextCursor,
    } = await offsetPage(c, "events/names", { q: query.q ?? null }, query);
    const answer = await readThrough(c, key, DISCOVERY_FRESH_SECONDS, () =>
      eventNames(useDatabase(c), projectId, query.q, page),
    );
    const { total, names } = answer.value;
    const next = await nextCursor(names.length > page.limit);
    return sendJson(c, {
      body: names.slice(0, page.limit),
      freshFor: answer.freshFor,
      cacheStatus: answer.cacheStatus,
      headers: { ...nextPageHeaders(c.req.url, next), "X-Total-Count": String(total) },
    });
  },
);
