import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { nextPageHeaders } from "../../lib/paging";
import { freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { PERFORMANCE_SORTS, pagePerformance } from "../../queries/insights/page-performance";
import { type PagePerformanceBody, PagePerformanceResponse } from "../../schemas/insights";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { CursorParam, LimitParam, OneOfParam, RangeParams } from "../params";
import { offsetPage } from "./offset-page";
import { checkedSessionScope, resolveInsightsScope, windowHeaders } from "./scope";

const PerformanceQuery = v.object({
  ...RangeParams,
  search: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, "search is at most 200 characters"),
      v.description("Literal, case-sensitive substring of the page's path, origin or title."),
    ),
  ),
  sortBy: v.optional(
    OneOfParam("sortBy", PERFORMANCE_SORTS, "The figure to sort by (default `sessions`)."),
    "sessions",
  ),
  sortOrder: v.optional(OneOfParam("sortOrder", ["asc", "desc"], "Sort direction (default `desc`)."), "desc"),
  limit: LimitParam(50, 500),
  cursor: CursorParam,
});

export const pagePerformanceRoute = new Hono<AppEnv>().get(
  "/:projectId/pages/performance",
  describeRoute({
    operationId: "listPagePerformance",
    tags: ["Insights"],
    summary: "Every page with its figures and SEO signals, sorted by any figure",
    description:
      "Every page of the window's sessions (no top-N cut before sorting), matching `search`, sorted by `sortBy` in `sortOrder`, ties by path then origin ascending. `avg_duration` is in **minutes**; `total_pages` counts every matching page. Paged with `limit`/`cursor` (next page in `Link`/`X-Next-Cursor`).",
    responses: cachedAnswerResponses({
      description: "Page performance",
      schema: PagePerformanceResponse,
      headers: LIST_RESPONSE_HEADERS,
    }),
  }),
  validate("query", PerformanceQuery),
  async (c) => {
    const query = c.req.valid("query");
    const project = c.get("project");
    const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
    const search = query.search === "" ? undefined : query.search;
    const order = { search: search ?? null, sortBy: query.sortBy, sortOrder: query.sortOrder };
    const {
      page,
      cacheKey: key,
      next: nextCursor,
    } = await offsetPage(c, "pages/performance", { ...scope.fingerprint, ...order }, query);
    const answer = await readThrough(
      c,
      key,
      freshnessFor(scope.range),
      async (): Promise<PagePerformanceBody> => {
        const db = useDatabase(c);
        const { total, rows } = await pagePerformance(db, await checkedSessionScope(db, scope, project.id), {
          search,
          sortBy: query.sortBy,
          sortOrder: query.sortOrder,
          page,
        });
        const shown = rows.slice(0, page.limit).map((row) => ({
          ...row,
          seo_signals: {
            high_bounce: row.bounce_rate > 70,
            low_engagement: row.avg_duration < 1,
            good_landing_page: row.bounce_rate < 40 && row.avg_duration > 2,
          },
        }));
        const { startDate, endDate, timezone } = scope.range.meta;
        return {
          total_pages: total,
          shown: shown.length,
          pages: shown,
          meta: { startDate, endDate, timezone, hasMore: rows.length > page.limit },
        };
      },
    );
    const next = await nextCursor(answer.value.meta.hasMore);
    return sendJson(c, {
      body: answer.value,
      freshFor: answer.freshFor,
      cacheStatus: answer.cacheStatus,
      headers: { ...nextPageHeaders(c.req.url, next), ...windowHeaders(scope.range) },
    });
  },
);
