import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { pageDayBits, pageDayRollups, pageDaySlices } from "../../db/schema";
import { textColumns } from "../statement-parts";
import { type CountedRanking, type PartCount, rankedInParts, shownOnPage } from "./counted-in-parts";
import { partsWeight, rowsOfDayParts } from "./day-parts";
import type { BitStringFilter, DayPart, Page, SessionScope } from "./model";
import { dayMasks, slicedSum } from "./session-masks";

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

/** A page's key as text columns. */
interface PageKeyRow extends Record<string, unknown> {
  origin: string | null;
  path: string | null;
}

/** A page's counted row from one part: the title of its matching sessions and how many there are. */
interface PagePartCount extends PartCount, PageKeyRow {
  title: string | null;
}

/** The summed weight of one measure of a ranked page over the days of one part. */
interface PageWeight extends Record<string, unknown> {
  origin: string | null;
  path: string | null;
  measure: string;
  weight: string;
}

/**
 * The pages ranked by their matching sessions: the page strings ANDed with each day's mask. With
 * `page`, not every page is counted, as in a breakdown (session-bits.ts): a page matches no more
 * sessions than it has in the window (its bound, from the page day rollups), so the pages of the
 * largest bounds are counted first, and then only the pages whose bound reaches the count at the
 * page's last place among them (counted-in-parts.ts). A site of thousands of pages counts tens of
 * them, not all. Without `page`, every page is counted.
 */
function pageRanking(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  page?: Page,
): CountedRanking<PagePartCount> {
  const p = pageDayBits;
  const r = pageDayRollups;
  const bounds = sql`
    bounds as materialized (
      select origin, path, bound, row_number() over (order by bound desc, path collate "C", origin collate "C") as place
      from (
        select ${r.origin} as origin, ${r.path} as path, sum(${r.sessions}) as bound from ${r}
        where ${r.projectId} = ${scope.projectId}
          and ${r.day} >= ${new Date(scope.window.start)} and ${r.day} < ${new Date(scope.window.end)}
        group by ${r.origin}, ${r.path}
      ) as per_page
    ),`;
  return {
    statementOf: (part, counting, beyond) => sql`
      with masks as materialized (${dayMasks(scope, filters, part)}),
      ${page === undefined ? sql`` : bounds}
      ${counting}
      -- A session has one title per page: the greatest of the matching sessions' is that of a string with a match.
      select origin, path, max(title) filter (where sessions > 0) as title, sum(sessions) as sessions, ${beyond} as beyond
      from counted group by origin, path having sum(sessions) > 0`,
    countedOf: (which) => sql`
      select ${p.origin} as origin, ${p.path} as path, ${p.title} as title, bit_count(m.mask & ${p.sessions}) as sessions
      from masks m join ${p} on ${p.projectId} = ${scope.projectId} and ${p.day} = m.day and ${p.block} = m.block
      ${
        page === undefined
          ? sql``
          : sql`where coalesce((${pageKey(p.origin, p.path)}) in (select ${pageKey(sql`b.origin`, sql`b.path`)} from bounds b where ${which}), false)`
      }`,
    keyOf: (row) => [row.path, row.origin],
    key: sql`origin, path`,
  };
}

/**
 * The ranked pages' weights over the days of `part`: per ranked page and day, its slices by index,
 * each ANDed with the day's mask and counted where it is read (joined and grouped over the window,
 * the strings were sorted to disk first).
 */
function pageWeightsStatement(
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  part: DayPart,
  ranked: readonly PageKeyRow[],
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
 * pageRanking), and only that page of them is summed from the slices, with one more row that
 * only tells that another page follows (its sums are left at 0): the caller ranks these rows
 * again with offset 0, by sessions and key alone. Without it, every page with a matching session
 * is summed (`/pages/performance` sorts them by any figure). The counts and the sums are read in
 * parts of the window's days at once (counted-in-parts.ts, day-parts.ts).
 */
export async function maskedPageRows(
  db: Database,
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  page?: Page,
): Promise<SQL> {
  const ranked = await rankedInParts(db, scope, pageRanking(scope, filters, page), page);
  const pages = ranked.map(({ rows: [first] }) => ({
    origin: first?.origin ?? null,
    path: first?.path ?? null,
  }));
  const summed = shownOnPage(pages, page);
  const weights =
    summed.length === 0
      ? []
      : await rowsOfDayParts<PageWeight>(db, scope, (part) =>
          pageWeightsStatement(scope, filters, part, summed),
        );
  // A page's title is the greatest of its parts' (each the greatest of its matching strings').
  const titles = ranked.flatMap(({ rows, sessions }) =>
    rows.map((row) => ({ ...row, sessions: String(sessions) })),
  );
  return sql`(
    select r.title, r.origin, r.path, r.sessions::numeric as sessions,
      r.sessions::numeric + ${partsWeight("repeat_views")} as pageviews, ${partsWeight("bounce")} as bounces,
      ${partsWeight("duration_ms")} as duration_ms, ${partsWeight("timed_views")} as timed_views
    from (
      select max(title) as title, origin, path, sessions
      from ${textColumns(titles, ["title", "origin", "path", "sessions"])} as t(title, origin, path, sessions)
      group by origin, path, sessions
    ) as r
    left join ${textColumns(weights, ["origin", "path", "measure", "weight"])} as w(origin, path, measure, weight)
      on ${samePage({ origin: sql`w.origin`, path: sql`w.path` }, RANKED)}
    group by r.title, r.origin, r.path, r.sessions
  ) as rows`;
}
