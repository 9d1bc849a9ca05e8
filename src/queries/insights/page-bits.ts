import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { pageDayBits, pageDayRollups, pageDaySlices } from "../../db/schema";
import { rankOrder } from "../sql-helpers";
import { partsWeight, rowsOfDayParts, textColumns } from "./day-parts";
import type { BitStringFilter, Page, SessionScope, TimeWindow } from "./model";
import { countedWithinBounds, dayMasks, slicedSum } from "./session-masks";

/**
 * Page rows under two or three filters, from the page strings per project day
 * (src/db/routines/refresh_session_bits.sql): a page's matching sessions of a day are the AND of
 * its strings with the day's mask (session-masks.ts), and its sums come from its bit slices as the
 * session sums do (session-bits.ts). Exact, and read per (page, day) rather than per session.
 */

interface PageKey {
  origin: SQL | AnyColumn;
  path: SQL | AnyColumn;
}

/** The page `a` is the page `b`: equal origin and path, NULL equal to NULL, by a hashable key first. */
function samePage(a: PageKey, b: PageKey): SQL {
  return sql`coalesce(${a.path}, '') = coalesce(${b.path}, '') and coalesce(${a.origin}, '') = coalesce(${b.origin}, '')
    and ${a.path} is not distinct from ${b.path} and ${a.origin} is not distinct from ${b.origin}`;
}

const RANKED: PageKey = { origin: sql`r.origin`, path: sql`r.path` };

/** A page's key for a hashed test: origin and path, NULL apart from "" (a string may hold either). */
const pageKey = (origin: SQL | AnyColumn, path: SQL | AnyColumn): SQL =>
  sql`${origin} is null, coalesce(${origin}, ''), ${path} is null, coalesce(${path}, '')`;

/**
 * The page strings ANDed with each day's mask, as rows `origin`, `path`, `title`, `sessions` (the
 * matching sessions of the page and title that day). With `page`, not every page is counted, as in
 * a breakdown (session-bits.ts): a page matches no more sessions than it has in the window (its
 * bound, from the page day rollups), so the pages of the largest bounds are counted first, and
 * then only the pages whose bound reaches the count at the page's last place among them. A site
 * of thousands of pages counts tens of them, not all. Without `page`, every page is counted.
 */
function countedPages(scope: SessionScope, page?: Page): SQL {
  const p = pageDayBits;
  const r = pageDayRollups;
  const countedOf = (which?: SQL) => sql`
      select ${p.origin} as origin, ${p.path} as path, ${p.title} as title, bit_count(m.mask & ${p.sessions}) as sessions
      from masks m join ${p} on ${p.projectId} = ${scope.projectId} and ${p.day} = m.day and ${p.block} = m.block
      ${
        which === undefined
          ? sql``
          : sql`where coalesce((${pageKey(p.origin, p.path)}) in (select ${pageKey(sql`b.origin`, sql`b.path`)} from bounds b where ${which}), false)`
      }`;
  if (page === undefined) return sql`counted as materialized (${countedOf()})`;
  return sql`
    bounds as materialized (
      select origin, path, bound, row_number() over (order by bound desc, path collate "C", origin collate "C") as place
      from (
        select ${r.origin} as origin, ${r.path} as path, sum(${r.sessions}) as bound from ${r}
        where ${r.projectId} = ${scope.projectId}
          and ${r.day} >= ${new Date(scope.window.start)} and ${r.day} < ${new Date(scope.window.end)}
        group by ${r.origin}, ${r.path}
      ) as per_page
    ),
    ${countedWithinBounds(countedOf, sql`origin, path`, page)}`;
}

/** A ranked page: its key, the title of its matching sessions and how many there are. */
interface RankedPageKey extends Record<string, unknown> {
  title: string | null;
  origin: string | null;
  path: string | null;
  sessions: string;
}

/** The summed weight of one measure of a ranked page over the days of one part. */
interface PageWeight extends Record<string, unknown> {
  origin: string | null;
  path: string | null;
  measure: string;
  weight: string;
}

/** The pages of the window with a matching session, ranked and cut to `page` and one row more. */
function rankedPagesStatement(scope: SessionScope, filters: readonly BitStringFilter[], page?: Page): SQL {
  const count = sql`sum(sessions)`;
  const cut =
    page === undefined
      ? sql``
      : sql`order by ${sql.join(rankOrder(count, sql`path`, sql`origin`), sql`, `)} limit ${page.limit + 1} offset ${page.offset}`;
  return sql`
    with masks as materialized (${dayMasks(scope, filters, scope.window)}),
    -- Materialized: flattened into the ranking, its strings would be sorted before they are counted.
    ${countedPages(scope, page)}
    -- A session has one title per page: the greatest of the matching sessions' is that of a string with a match.
    select origin, path, max(title) filter (where sessions > 0) as title, ${count} as sessions
    from counted group by origin, path having ${count} > 0
    ${cut}`;
}

/**
 * The ranked pages' weights over the days of `part`: per ranked page and day, its slices by index,
 * each ANDed with the day's mask and counted where it is read (joined and grouped over the window,
 * the strings were sorted to disk first).
 */
function pageWeightsStatement(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  part: TimeWindow,
  ranked: readonly RankedPageKey[],
): SQL {
  const s = pageDaySlices;
  return sql`
    with masks as materialized (${dayMasks(scope, filters, part)})
    select r.origin, r.path, w.measure, sum(w.weight) as weight
    from ${textColumns(ranked, ["origin", "path"])} as r(origin, path)
    cross join masks m cross join lateral (
      select ${s.measure} as measure, ${slicedSum(sql`m.mask`, s.slice, s.sessions)} as weight
      from ${s}
      where ${s.projectId} = ${scope.projectId} and ${s.day} = m.day and ${s.block} = m.block
        and ${samePage(s, RANKED)}
      group by ${s.measure}
    ) as w
    group by r.origin, r.path, w.measure`;
}

/**
 * The matching sessions' page rows (title, origin, path, sessions, pageviews, bounces, duration_ms,
 * timed_views), one per page, as a FROM item. With `page`, the pages are ranked by their matching
 * sessions first (one AND and count per page and day, of the pages that can reach it:
 * countedPages), and only that page of them, one more than the page, is summed from the slices:
 * the caller ranks these rows again with offset 0. Without it, every page with a matching session
 * is summed (`/pages/performance` sorts them by any figure). The sums are read in parts of the
 * window's days at once (day-parts.ts).
 */
export async function maskedPageRows(
  db: Database,
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  page?: Page,
): Promise<SQL> {
  const ranked = (await db.execute<RankedPageKey>(rankedPagesStatement(scope, filters, page))).rows;
  const weights =
    ranked.length === 0
      ? []
      : await rowsOfDayParts<PageWeight>(db, scope, (part) =>
          pageWeightsStatement(scope, filters, part, ranked),
        );
  return sql`(
    select r.title, r.origin, r.path, r.sessions::numeric as sessions,
      r.sessions::numeric + ${partsWeight("repeat_views")} as pageviews, ${partsWeight("bounce")} as bounces,
      ${partsWeight("duration_ms")} as duration_ms, ${partsWeight("timed_views")} as timed_views
    from ${textColumns(ranked, ["title", "origin", "path", "sessions"])} as r(title, origin, path, sessions)
    left join ${textColumns(weights, ["origin", "path", "measure", "weight"])} as w(origin, path, measure, weight)
      on ${samePage({ origin: sql`w.origin`, path: sql`w.path` }, RANKED)}
    group by r.title, r.origin, r.path, r.sessions
  ) as rows`;
}
