import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { cacheKey, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { liveVisitors } from "../../queries/live";
import { LiveSchema } from "../../schemas/insights";
import { CACHED_RESPONSE_HEADERS, cachedAnswerResponses } from "../openapi";
import { WholeNumberParam } from "../params";

/** A live count may be this many seconds old (contract section 9). */
export const LIVE_FRESH_SECONDS = 10;

const LiveQuery = v.object({
  minutes: v.optional(WholeNumberParam("minutes", 60, "Look-back window in minutes (1–60)."), "5"),
});

export const live = new Hono<AppEnv>().get(
  "/:projectId/live",
  describeRoute({
    operationId: "getLive",
    tags: ["Insights"],
    summary: "Live visitors",
    description:
      "Distinct visitors with any event in the last `minutes` minutes (default 5). Cached for 10 s; send `Cache-Control: no-cache` to skip the cache.",
    responses: cachedAnswerResponses({
      description: "Visitor count",
      schema: LiveSchema,
      headers: CACHED_RESPONSE_HEADERS,
    }),
  }),
  validate("query", LiveQuery),
  async (c) => {
    const { minutes } = c.req.valid("query");
    const projectId = c.get("project").id;
    const key = await cacheKey(projectId, "live", { minutes });
    const answer = await readThrough(c, key, LIVE_FRESH_SECONDS, async () => ({
      visitors: await liveVisitors(useDatabase(c), projectId, minutes, new Date()),
    }));
    return sendJson(c, { ...answer, body: answer.value });
  },
);
