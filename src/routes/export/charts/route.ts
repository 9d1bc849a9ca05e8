import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { AppEnv } from "../../../env";
import { cacheKey, freshnessFor, readThrough } from "../../../middleware/cache";
import { useDatabase } from "../../../middleware/database";
import { sendJson } from "../../../middleware/send-json";
import { validate } from "../../../middleware/validate";
import { chartSeries } from "../../../queries/charts/series";
import { assertValidRegexes } from "../../../queries/filter-conditions";
import { ChartResponse } from "../../../schemas/charts";
import { cachedAnswerResponses } from "../../openapi";
import { rollupsAllowed } from "../../params";
import { chartSeriesQueries, resolveChartRequest } from "./request";
import { ChartsQuery } from "./schema";
import { chartBody } from "./shaping";

export const charts = new Hono<AppEnv>().get(
  "/charts",
  describeRoute({
    operationId: "exportCharts",
    tags: ["Export"],
    summary: "Chart series of events",
    description:
      "Time series of up to 10 event series, each counted by a segment (events, visitors, sessions, averages, numeric properties), optionally split by up to 3 breakdowns and compared with the previous period. Buckets are zero-filled and labelled in `timezone`. Cached in KV (60 s for windows that reach now, 24 h for closed ones); `Cache-Control: no-cache` skips the cache.",
    responses: cachedAnswerResponses({ description: "Chart series", schema: ChartResponse }),
  }),
  validate("query", ChartsQuery),
  async (c) => {
    const query = c.req.valid("query");
    const project = c.get("project");
    const request = resolveChartRequest(query, project, new Date());
    const key = await cacheKey(project.id, "charts", request.fingerprint);
    const answer = await readThrough(c, key, freshnessFor(request.range), async () => {
      const db = useDatabase(c);
      const { chartFilters, seriesFilters, queries } = chartSeriesQueries(request, query.filters, {
        projectId: project.id,
        rollups: rollupsAllowed(c),
      });
      await assertValidRegexes(db, chartFilters);
      for (const [index, filters] of seriesFilters.entries()) {
        await assertValidRegexes(db, filters, `${request.param}/${index}/filters`);
      }
      const results = await Promise.all(queries.map((series) => chartSeries(db, series)));
      return chartBody(request, results);
    });
    return sendJson(c, { body: answer.value, freshFor: answer.freshFor, cacheStatus: answer.cacheStatus });
  },
);
