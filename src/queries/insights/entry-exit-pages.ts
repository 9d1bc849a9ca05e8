import { and, gt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessions } from "../../db/schema";
import { rankOrder, ratio, toNumber } from "../sql-helpers";
import type { Page, SessionScope } from "./model";
import { sessionsInScope } from "./session-scope";

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
 * Entry or exit pages (contract A4): the scope's sessions with a screen view, grouped by their
 * first or last screen view's page, by sessions then path then origin. Read from the sessions of
 * the window (no rollup holds entry and exit pages): its cost grows with the window's sessions.
 */
export async function entryExitPages(
  db: Database,
  scope: SessionScope,
  mode: EntryExitMode,
  page: Page,
): Promise<EntryExitRow[]> {
  const origin = mode === "entry" ? sessions.entryOrigin : sessions.exitOrigin;
  const path = mode === "entry" ? sessions.entryPath : sessions.exitPath;
  const sessionCount = sql<string>`count(*)`;
  const rows = await db
    .select({
      origin,
      path,
      sessions: sessionCount,
      pageviews: sql<string>`sum(${sessions.screenViewCount})`,
      revenue: sql<string>`sum(${sessions.revenue})`,
      bounce_rate: ratio(sql`count(*) filter (where ${sessions.isBounce})`, sessionCount, 100),
    })
    .from(sessions)
    .where(and(sessionsInScope(scope), gt(sessions.screenViewCount, 0)))
    .groupBy(origin, path)
    .orderBy(...rankOrder(sessionCount, path, origin))
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map((row) => ({
    origin: row.origin,
    path: row.path,
    sessions: toNumber(row.sessions),
    pageviews: toNumber(row.pageviews),
    revenue: toNumber(row.revenue),
    bounce_rate: toNumber(row.bounce_rate),
  }));
}
