import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { formatInstant } from "../../lib/timezone";
import { cacheKey, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { assertValidRegexes } from "../../queries/filters";
import {
  type ApproximateMetric,
  type MetricsAnswer,
  type SessionMetrics,
  sessionMetrics,
} from "../../queries/insights";
import { CACHED_RESPONSE_HEADERS, jsonContent, PROJECT_ROUTE_PROBLEMS, problemResponses } from "../openapi";
import { freshnessFor, RangeParams, resolveInsightsScope, SeriesParams } from "./params";

const MetricsQuery = v.object({ ...RangeParams, ...SeriesParams });

const MetricsSchema = v.object({
  bounce_rate: v.pipe(v.number(), v.description("100 × bounced sessions / sessions (2 decimals).")),
  unique_visitors: v.pipe(v.number(), v.description("Distinct visitors among the sessions.")),
  total_sessions: v.pipe(v.number(), v.description("Sessions whose first event lies in the window.")),
  avg_session_duration: v.pipe(
    v.number(),
    v.description("Mean session length in seconds, over sessions longer than 0."),
  ),
  total_screen_views: v.number(),
  views_per_session: v.number(),
  total_revenue: v.pipe(v.number(), v.description("Sum of the sessions' revenue, in cents.")),
});
const SeriesPointSchema = v.object({
  date: v.pipe(v.string(), v.description("Bucket start, RFC 3339 with the offset of `timezone`.")),
  ...MetricsSchema.entries,
});
const MetricsResponse = v.pipe(
  v.object({
    metrics: MetricsSchema,
    series: v.array(SeriesPointSchema),
    previous: v.optional(v.object({ metrics: MetricsSchema, series: v.array(SeriesPointSchema) })),
    meta: v.object({
      startDate: v.string(),
      endDate: v.string(),
      timezone: v.string(),
      interval: v.string(),
      approximate: v.pipe(v.array(v.string()), v.description("Metrics computed from sketches (±2 %).")),
    }),
  }),
  v.metadata({ ref: "MetricsResponse" }),
);

/** The metrics either period took from sketches. */
function approximateMetrics(...answers: Array<MetricsAnswer | undefined>): ApproximateMetric[] {
  return [...new Set(answers.flatMap((answer) => answer?.approximate ?? []))];
}

function seriesOf(buckets: number[], values: SessionMetrics[], timezone: string) {
  return buckets.map((start, index) => ({ date: formatInstant(start, timezone), ...values[index] }));
}

export const metrics = new Hono<AppEnv>().get(
  "/:projectId/metrics",
  describeRoute({
    tags: ["Insights"],
    summary: "Session metrics and their time series",
    description:
      "Visitors, sessions, bounce rate, session duration, screen views and revenue over the window, plus one zero-filled point per bucket. `previous=true` adds the previous period. Cached in KV (60 s for windows that reach now, 24 h for closed ones); `Cache-Control: no-cache` skips the cache.",
    responses: {
      200: {
        description: "Metrics",
        headers: CACHED_RESPONSE_HEADERS,
        content: jsonContent(MetricsResponse),
      },
      304: { description: "Not modified (If-None-Match matched the ETag)" },
      ...problemResponses(...PROJECT_ROUTE_PROBLEMS),
    },
  }),
  validate("query", MetricsQuery),
  async (c) => {
    const scope = resolveInsightsScope(c, c.req.valid("query"), { autoInterval: true });
    const project = c.get("project");
    const key = await cacheKey(project.id, "metrics", scope.fingerprint);
    const { range, filters, rollups, projectTimezone } = scope;
    const answer = await readThrough(c, key, freshnessFor(range), async () => {
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
