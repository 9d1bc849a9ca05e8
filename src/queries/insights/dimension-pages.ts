import { and, eq, gt, gte, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { pageDimensionRollups, sessionPages } from "../../db/schema";
import { dimensionValueCondition, sessionConditions } from "../filter-conditions";
import type { DimensionFilter, Page, RankedPage, SessionScope } from "./model";
import { rankedPages } from "./ranked-rows";
import { daysWithExactParts, projectDaysBuilt } from "./window-rows";

/**
 * Top pages under a filter on one dimension: the whole project days of the window from the page
 * rollups per day and value (src/db/routines/refresh_page_dimension_rollups.sql), the rows of the
 * values the filter keeps; the hours around them, or the days while their rows are not built,
 * from the session pages of the matching sessions. The same numbers as the exact path (pages.ts).
 */
export async function dimensionTopPages(
  db: Database,
  scope: SessionScope,
  { dimension, filter }: DimensionFilter,
  page: Page,
): Promise<RankedPage[]> {
  const r = pageDimensionRollups;
  const sp = sessionPages;
  const rows = daysWithExactParts(
    scope,
    await projectDaysBuilt(db, scope),
    (whole) => sql`
      select ${r.title} as title, ${r.origin} as origin, ${r.path} as path, ${r.sessions} as sessions,
        ${r.pageviews} as pageviews, ${r.bounces} as bounces, ${r.durationMs} as duration_ms, ${r.timedViews} as timed_views
      from ${r}
      where ${r.projectId} = ${scope.projectId} and ${r.dimension} = ${dimension}
        and ${r.day} >= ${new Date(whole.start)} and ${r.day} < ${new Date(whole.end)}
        and ${dimensionValueCondition(filter, r.name)}`,
    (window) => {
      const start = new Date(window.start);
      const end = new Date(window.end);
      return sql`
        select ${sp.title} as title, ${sp.origin} as origin, ${sp.path} as path, 1 as sessions,
          ${sp.views} as pageviews, ${sp.isBounce}::int as bounces, ${sp.durationMs} as duration_ms, ${sp.timedViews} as timed_views
        from ${sp}
        where ${and(
          eq(sp.projectId, scope.projectId),
          gte(sp.startedAt, start),
          lt(sp.startedAt, end),
          gt(sp.views, 0),
          sessionConditions(scope.filters, {
            window: { start, end },
            of: { projectId: sp.projectId, sessionId: sp.sessionId },
          }),
        )}`;
    },
  );
  return rankedPages(db, sql`(${rows}) as rows`, page);
}
