import { and, gt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessions } from "../../db/schema";
import { rankOrder, ratio, toNumber } from "../sql-helpers";
import { type Page, rollupsCover, type SessionScope } from "./model";
import { sessionsInScope } from "./session-scope";
import { windowRows } from "./window-rows";

export type EntryExitMode = "entry" | "exit";

export interface EntryExitRow {
  origin: string | null;
  path: string | null;
  /** Sessions whose first (entry) or last (exit) screen view is this page. */
  sessions: number;
  /** Every screen view of those sessions (OpenPanel's meaning), not only of this page. */
  pageviews: number;
  /** Their revenue, cents. */
  revenue: number;
  bounce_rate: number;
}

/**
 * The scope's sessions with a screen view as rows (mode, origin, path, sessions, bounces,
 * screen_views, revenue): the entry and exit rollups of the window's days and hours without
 * filters (src/db/routines/refresh_entry_exit_rollups.sql), else the window's sessions that pass
 * the filters, one row per session.
 */
function entryExitRowsOf(scope: SessionScope, mode: EntryExitMode): SQL {
  if (rollupsCover(scope)) return windowRows("entryExit", scope, [], sql`mode = ${mode}`);
  const s = sessions;
  const origin = mode === "entry" ? s.entryOrigin : s.exitOrigin;
  const path = mode === "entry" ? s.entryPath : s.exitPath;
  return sql`(select ${origin} as origin, ${path} as path, 1 as sessions, ${s.isBounce}::int as bounces,
      ${s.screenViewCount} as screen_views, ${s.revenue} as revenue
    from ${s} where ${and(sessionsInScope(scope), gt(s.screenViewCount, 0))}) as units`;
}

/**
 * Entry or exit pages (contract A4): the scope's sessions with a screen view, grouped by their
 * first or last screen view's page, by sessions then path then origin.
 */
export async function entryExitPages(
  db: Database,
  scope: SessionScope,
  mode: EntryExitMode,
  page: Page,
): Promise<EntryExitRow[]> {
  const sessionCount = sql<string>`sum(sessions)`;
  const result = await db.execute<Record<keyof EntryExitRow, string | number | null>>(sql`
    select origin, path, ${sessionCount} as sessions, sum(screen_views) as pageviews, sum(revenue) as revenue,
      ${ratio(sql`sum(bounces)`, sessionCount, 100)} as bounce_rate
    from ${entryExitRowsOf(scope, mode)}
    group by origin, path
    having sum(sessions) > 0
    order by ${sql.join(rankOrder(sessionCount, sql`path`, sql`origin`), sql`, `)}
    limit ${page.limit + 1} offset ${page.offset}`);
  return result.rows.map((row) => ({
    origin: row.origin === null ? null : String(row.origin),
    path: row.path === null ? null : String(row.path),
    sessions: toNumber(row.sessions),
    pageviews: toNumber(row.pageviews),
    revenue: toNumber(row.revenue),
    bounce_rate: toNumber(row.bounce_rate),
  }));
}
