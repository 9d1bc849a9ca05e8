import type { Database } from "../../db/client";
import type { Page, PageRow, SessionScope } from "./model";
import { withPageRevenue } from "./page-revenue";
import { pageRowsOf } from "./page-rows";
import { rankedPages } from "./ranked-rows";

/**
 * Top pages: per (origin, path), the sessions with a screen view of it, those screen views, the
 * bounce rate over those sessions, the mean time on page (contract section 5) and the revenue of
 * those screen views. Fetches one row more than asked so the caller knows whether another page
 * follows.
 */
export async function topPages(db: Database, scope: SessionScope, page: Page): Promise<PageRow[]> {
  return withPageRevenue(
    db,
    scope,
    pageRowsOf(db, scope).then((rows) => rankedPages(db, rows, page)),
  );
}
