import { and, eq, gt, gte, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessionPages } from "../../db/schema";
import { sessionConditions } from "../filter-conditions";
import { rankOrder, ratio } from "../sql-helpers";
import { dimensionTopPages } from "./dimension-pages";
import {
  dayRollupsFilter,
  type Page,
  type PageRow,
  type RankedPage,
  rollupsCover,
  type SessionScope,
  toPageRow,
} from "./model";
import { withPageRevenue } from "./page-revenue";
import { rolledUpTopPages } from "./rollups";
import { windowDates } from "./session-scope";

/**
 * Top pages: per (origin, path), the sessions with a screen view of it, those screen views, the
 * bounce rate over those sessions and the mean time on page (contract section 5). Fetches one
 * row more than asked so the caller knows whether another page follows.
 */
export function topPages(db: Database, scope: SessionScope, page: Page): Promise<PageRow[]> {
  return withPageRevenue(db, scope, rankedTopPages(db, scope, page));
}

function rankedTopPages(db: Database, scope: SessionScope, page: Page): Promise<RankedPage[]> {
  if (rollupsCover(scope)) return rolledUpTopPages(db, scope, page);
  const filter = dayRollupsFilter(scope);
  if (filter) return dimensionTopPages(db, scope, filter, page);
  return exactTopPages(db, scope, page);
}

/**
 * From the session pages of the window's sessions: a session counts once per page it viewed.
 * Filters apply to the session each page row names, so no events are read.
 */
async function exactTopPages(db: Database, scope: SessionScope, page: Page): Promise<RankedPage[]> {
  const window = windowDates(scope);
  const sessionCount = sql<string>`count(*)`;
  const rows = await db
    .select({
      title: sql<string | null>`max(${sessionPages.title})`,
      origin: sessionPages.origin,
      path: sessionPages.path,
      sessions: sessionCount,
      pageviews: sql<string>`sum(${sessionPages.views})`,
      bounce_rate: ratio(sql`count(*) filter (where ${sessionPages.isBounce})`, sessionCount, 100),
      avg_duration: ratio(sql`sum(${sessionPages.durationMs})`, sql`sum(${sessionPages.timedViews})`, 0.001),
    })
    .from(sessionPages)
    .where(
      and(
        eq(sessionPages.projectId, scope.projectId),
        gte(sessionPages.startedAt, window.start),
        lt(sessionPages.startedAt, window.end),
        gt(sessionPages.views, 0),
        sessionConditions(scope.filters, {
          window,
          of: { projectId: sessionPages.projectId, sessionId: sessionPages.sessionId },
        }),
      ),
    )
    .groupBy(sessionPages.origin, sessionPages.path)
    .orderBy(...rankOrder(sessionCount, sessionPages.path, sessionPages.origin))
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map(toPageRow);
}
