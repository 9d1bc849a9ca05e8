import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { rankOrder, ratio } from "../sql-helpers";
import {
  type BreakdownRow,
  type BreakdownRowSource,
  type Page,
  type PageRowSource,
  type RankedPage,
  toBreakdownRow,
  toPageRow,
} from "./model";

/**
 * The last step every pre-aggregated path shares: summed rows (rollup rows, pair or page rows per
 * value, and exact parts reduced to the same columns) grouped into the answer's rows, ranked, and
 * cut to one page plus one row (which tells the caller that another page follows).
 */

/** Top pages from a FROM item of page rows (title, origin, path, sessions, pageviews, bounces, duration_ms, timed_views). */
export async function rankedPages(db: Database, rows: SQL, page: Page): Promise<RankedPage[]> {
  const sessionCount = sql`sum(sessions)`;
  const result = await db.execute<PageRowSource>(sql`
    select max(title) as title, origin, path, ${sessionCount} as sessions, sum(pageviews) as pageviews,
      ${ratio(sql`sum(bounces)`, sessionCount, 100)} as bounce_rate,
      ${ratio(sql`sum(duration_ms)`, sql`sum(timed_views)`, 0.001)} as avg_duration
    from ${rows}
    group by origin, path
    order by ${sql.join(rankOrder(sessionCount, sql`path`, sql`origin`), sql`, `)}
    limit ${page.limit + 1} offset ${page.offset}`);
  return result.rows.map(toPageRow);
}

/** A breakdown from a FROM item of session rows (name, prefix, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue). */
export async function rankedBreakdown(
  db: Database,
  rows: SQL,
  withPrefix: boolean,
  page: Page,
): Promise<BreakdownRow[]> {
  const sessionCount = sql`sum(sessions)`;
  const result = await db.execute<BreakdownRowSource>(sql`
    select name, prefix, ${sessionCount} as sessions, sum(screen_views) as pageviews,
      ${ratio(sql`sum(bounces)`, sessionCount, 100)} as bounce_rate,
      ${ratio(sql`sum(duration_ms)`, sql`sum(timed_sessions)`, 0.001)} as avg_session_duration,
      sum(revenue) as revenue
    from ${rows}
    group by name, prefix
    order by ${sql.join(rankOrder(sessionCount, sql`name`, sql`prefix`), sql`, `)}
    limit ${page.limit + 1} offset ${page.offset}`);
  return result.rows.map((row) => toBreakdownRow(row, withPrefix));
}
