import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { pageWithTotal, ratio, toNumber } from "../sql-helpers";
import type { Numeric, Page, SessionScope } from "./model";
import { pageRowsOf } from "./page-rows";

export const PERFORMANCE_SORTS = ["sessions", "pageviews", "bounce_rate", "avg_duration"] as const;
export type PerformanceSort = (typeof PERFORMANCE_SORTS)[number];

export interface PerformanceRequest {
  /** Literal, case-sensitive substring of the page's path, origin or title. */
  search?: string;
  sortBy: PerformanceSort;
  sortOrder: "asc" | "desc";
  page: Page;
}

export interface PerformanceRow {
  origin: string | null;
  path: string | null;
  title: string;
  sessions: number;
  pageviews: number;
  /** Minutes, over views with a time on page above 0. */
  avg_duration: number;
  bounce_rate: number;
}

/**
 * Every page of the scope (no top-N cut first), sorted by one figure, ties by path then origin
 * ascending, and how many pages match the search in all. Reads the same page rows as /pages.
 */
export async function pagePerformance(
  db: Database,
  scope: SessionScope,
  request: PerformanceRequest,
): Promise<{ total: number; rows: PerformanceRow[] }> {
  const rows = await pageRowsOf(db, scope);
  // strpos, not LIKE: the search is literal text, `%` and `_` included.
  const search =
    request.search === undefined
      ? sql``
      : sql`where strpos(coalesce(path, ''), ${request.search}) > 0 or strpos(coalesce(origin, ''), ${request.search}) > 0 or strpos(title, ${request.search}) > 0`;
  const direction = request.sortOrder === "asc" ? sql`asc` : sql`desc`;
  const result = await db.execute<{
    total: Numeric;
    origin: string | null;
    path: string | null;
    title: string | null;
    sessions: Numeric;
    pageviews: Numeric;
    avg_duration: Numeric;
    bounce_rate: Numeric;
  }>(
    pageWithTotal(
      sql`select * from (
        select origin, path, coalesce(max(title), '') as title, sum(sessions) as sessions, sum(pageviews) as pageviews,
          coalesce(round(sum(duration_ms)::numeric / 60000 / nullif(sum(timed_views), 0), 2), 0) as avg_duration,
          ${ratio(sql`sum(bounces)`, sql`sum(sessions)`, 100)} as bounce_rate
        from ${rows}
        group by origin, path
      ) as pages ${search}`,
      sql`${sql.identifier(request.sortBy)} ${direction}, path collate "C" asc nulls last, origin collate "C" asc nulls last`,
      request.page,
    ),
  );
  const total = toNumber(result.rows[0]?.total ?? 0);
  return {
    total,
    rows: result.rows
      .filter((row) => row.sessions !== null)
      .map((row) => ({
        origin: row.origin,
        path: row.path,
        title: row.title ?? "",
        sessions: toNumber(row.sessions),
        pageviews: toNumber(row.pageviews),
        avg_duration: toNumber(row.avg_duration),
        bounce_rate: toNumber(row.bounce_rate),
      })),
  };
}
