import type { Database } from "../../db/client";
import { windowParts } from "./day-parts";
import { bitStringFilters, type Page, type PageRow, type SessionScope } from "./model";
import { maskedPageRows } from "./page-bits";
import { withPageRevenue } from "./page-revenue";
import { pageRowsOf } from "./page-rows";
import { rankedPages } from "./ranked-rows";
import { bitStringsCover } from "./session-masks";

/**
 * Top pages: per (origin, path), the sessions with a screen view of it, those screen views, the
 * bounce rate over those sessions, the mean time on page (contract section 5) and the revenue of
 * those screen views. Fetches one row more than asked so the caller knows whether another page
 * follows; under two or three filters only that row's rank is computed (its other figures are 0).
 */
export async function topPages(db: Database, scope: SessionScope, page: Page): Promise<PageRow[]> {
  const combined = bitStringFilters(scope);
  // From the strings, the rows are read in the window's parts with the pages' revenue beside them.
  const ranked =
    combined && (await bitStringsCover(db, scope, [], windowParts(scope) + 1))
      ? // The rows are the page already (and one more); ranked again, from their start.
        maskedPageRows(db, scope, combined, page).then((rows) =>
          rankedPages(db, rows, { offset: 0, limit: page.limit }),
        )
      : pageRowsOf(db, scope).then((rows) => rankedPages(db, rows, page));
  return withPageRevenue(db, scope, ranked);
}
