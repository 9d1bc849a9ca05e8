import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { type OverviewBody, OverviewResponse } from "../../schemas/insights";
import { CACHED_RESPONSE_HEADERS, cachedAnswerResponses } from "../openapi";
import { RangeParams, SeriesParams } from "../params";
import { answerMetrics } from "./metrics-answer";
import { resolveInsightsScope } from "./scope";

const OverviewQuery = v.object({ ...RangeParams, ...SeriesParams });

/** OpenPanel's `/overview`: the figures of `/metrics` for the same query, as `summary` and `series`. */
export const overview = new Hono<AppEnv>().get(
  "/:projectId/overview",
  describeRoute({
    operationId: "getOverview",
    tags: ["Insights"],
    summary: "Session metrics and their time series, as OpenPanel's overview",
    description:
      "The numbers of /metrics for the same query (`summary` = its `metrics`, `series` the same zero-filled buckets), with `interval` defaulting to `day` as OpenPanel does, and the window repeated at the top level. Cached with /metrics.",
    responses: cachedAnswerResponses({
      description: "Overview",
      schema: OverviewResponse,
      headers: CACHED_RESPONSE_HEADERS,
    }),
  }),
  validate("query", OverviewQuery),
  async (c) => {
    const scope = resolveInsightsScope(c, c.req.valid("query"), { autoInterval: false, defaultRange: "30d" });
    const answer = await answerMetrics(c, scope);
    const { metrics, series, previous, meta } = answer.value;
    const body: OverviewBody = {
      summary: metrics,
      series,
      interval: meta.interval,
      startDate: meta.startDate,
      endDate: meta.endDate,
      ...(previous ? { previous: { summary: previous.metrics, series: previous.series } } : {}),
      meta,
    };
    return sendJson(c, { ...answer, body });
  },
);
