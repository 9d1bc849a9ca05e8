import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { MetricsResponse } from "../../schemas/insights";
import { CACHED_RESPONSE_HEADERS, cachedAnswerResponses } from "../openapi";
import { RangeParams, SeriesParams } from "../params";
import { answerMetrics } from "./metrics-answer";
import { resolveInsightsScope } from "./scope";

const MetricsQuery = v.object({ ...RangeParams, ...SeriesParams });

export const metrics = new Hono<AppEnv>().get(
  "/:projectId/metrics",
  describeRoute({
    operationId: "getMetrics",
    tags: ["Insights"],
    summary: "Session metrics and their time series",
    description:
      "Visitors, sessions, bounce rate, session duration, screen views and revenue over the window, plus one zero-filled point per bucket. `previous=true` adds the previous period. Cached in KV (60 s for windows that reach now, 24 h for closed ones); `Cache-Control: no-cache` skips the cache.",
    responses: cachedAnswerResponses({
      description: "Metrics",
      schema: MetricsResponse,
      headers: CACHED_RESPONSE_HEADERS,
    }),
  }),
  validate("query", MetricsQuery),
  async (c) => {
    const scope = resolveInsightsScope(c, c.req.valid("query"), { autoInterval: true });
    const answer = await answerMetrics(c, scope);
    return sendJson(c, { ...answer, body: answer.value });
  },
);
