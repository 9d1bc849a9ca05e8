import { and, eq, gt, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { pageDimensionRollups, sessionPages } from "../../db/schema";
import { dimensionValueCondition, SESSION_OF_PAGE_ROW, sessionConditions } from "../filter-conditions";
import { windowParts } from "./day-parts";
import {
  bitStringFilters,
  dayRollupsFilter,
  rollupsCover,
  type SessionScope,
  type TimeWindow,
} from "./model";
import { maskedPageRows } from "./page-bits";
import { bitStringsCover } from "./session-masks";
import { daysWithExactParts, projectDaysBuilt, windowRows } from "./window-rows";

/**
 * The page rows of a scope as one FROM item (title, origin, path, sessions, pageviews, bounces,
 * duration_ms, timed_views), from the cheapest source that gives the exact numbers: the page
 * rollups (unfiltered), the page rollups per day and dimension value (one dimension filter), the
 * page strings per day (two or three filters, page-bits.ts), else the session pages of the
 * matching sessions. `/pages` ranks them (ranked-rows.ts),
 * `/pages/performance` sorts them by any of their figures (page-performance.ts).
 */
export async function pageRowsOf(db: Database, scope: SessionScope): Promise<SQL> {
  if (rollupsCover(scope)) return windowRows("pages", scope, []);
  const filter = dayRollupsFilter(scope);
  if (!filter) {
    const combined = bitStringFilters(scope);
    if (combined && (await bitStringsCover(db, scope, [], windowParts(scope))))
      return maskedPageRows(db, scope, combined);
    return sql`(${sessionPageRows(scope, scope.window)}) as rows`;
  }
  const r = pageDimensionRollups;
  const rows = daysWithExactParts(
    scope,
    await projectDaysBuilt(db, scope),
    (whole) => sql`
      select ${r.title} as title, ${r.origin} as origin, ${r.path} as path, ${r.sessions} as sessions,
        ${r.pageviews} as pageviews, ${r.bounces} as bounces, ${r.durationMs} as duration_ms, ${r.timedViews} as timed_views
      from ${r}
      where ${r.projectId} = ${scope.projectId} and ${r.dimension} = ${filter.dimension}
        and ${r.day} >= ${new Date(whole.start)} and ${r.day} < ${new Date(whole.end)}
        and ${dimensionValueCondition(filter.filter, r.name)}`,
    (window) => sessionPageRows(scope, window),
  );
  return sql`(${rows}) as rows`;
}

/**
 * The session pages of the scope's sessions that start in `window`, one row per session and page
 * it screened: filters apply to the session each row names, so no events are read.
 */
function sessionPageRows(scope: SessionScope, window: TimeWindow): SQL {
  const sp = sessionPages;
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
        of: SESSION_OF_PAGE_ROW,
      }),
    )}`;
}
