import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { formatInstant } from "../../lib/timezone";
import { cacheKey, freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { assertValidRegexes } from "../../queries/filter-conditions";
import { sessionMetrics } from "../../queries/insights/metrics";
import {
  type ApproximateMetric,
  EMPTY_METRICS,
  type MetricsAnswer,
  type SessionMetrics,
} from "../../queries/insights/model";
import { type MetricsBody, MetricsResponse } from "../../schemas/insights";
import { CACHED_RESPONSE_HEADERS, cachedAnswerResponses } from "../openapi";
import { RangeParams, SeriesParams } from "../params";
import { resolveInsightsScope } from "./scope";

const MetricsQuery = v.object({ ...RangeParams, ...SeriesParams });

/** The metrics either period took from sketches. */
function approximateMetrics(...answers: Array<MetricsAnswer | undefined>): ApproximateMetric[] {
  return [...new Set(answers.flatMap((answer) => answer?.approximate ?? []))];
}

function seriesOf(buckets: number[], values: SessionMetrics[], timezone: string) {
  return buckets.map((start, index) => ({
    date: formatInstant(start, timezone),
    ...(values[index] ?? EMPTY_METRICS),
  }));
}

export const metrics = new Hono<AppEnv>().get(
  "/:projectId/metrics",
  describeRoute({
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
    const project = c.get("project");
    const key = await cacheKey(project.id, "metrics", scope.fingerprint);
    const { range, filters, rollups, projectTimezone } = scope;
    const answer = await readThrough(c, key, freshnessFor(range), async (): Promise<MetricsBody> => {
      const db = useDatabase(c);
      await assertValidRegexes(db, filters);
      const current = sessionMetrics(
        db,
        { projectId: project.id, window: range.window, filters, rollups, projectTimezone },
        range.buckets,
      );
      const previous = range.previous
        ? sessionMetrics(
            db,
            { projectId: project.id, window: range.previous.window, filters, rollups, projectTimezone },
            range.previous.buckets,
          )
        : undefined;
      const [now, before] = await Promise.all([current, previous]);
      return {
        metrics: now.totals,
        series: seriesOf(range.buckets, now.series, range.timezone),
        ...(before && range.previous
          ? {
              previous: {
                metrics: before.totals,
                series: seriesOf(range.previous.buckets, before.series, range.timezone),
              },
            }
          : {}),
        meta: { ...range.meta, approximate: approximateMetrics(now, before) },
      };
    });
    return sendJson(c, { ...answer, body: answer.value });
  },
);
