import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { pageDayBits, pageDaySlices } from "../../db/schema";
import { rankOrder } from "../sql-helpers";
import type { BitStringFilter, Page, SessionScope } from "./model";
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

/**
 * The matching sessions' page rows (title, origin, path, sessions, pageviews, bounces, duration_ms,
 * timed_views), one per page. With `page`, the pages are ranked by their matching sessions first
 * (one AND and count per page and day), and only that page of them, one more than the page, is
 * summed from the slices: the caller ranks these rows again with offset 0. Without it, every page
 * with a matching session is summed (`/pages/performance` sorts them by any figure).
 */
export function maskedPageRows(scope: SessionScope, filters: readonly BitStringFilter[], page?: Page): SQL {
  const p = pageDayBits;
  const s = pageDaySlices;
  const count = sql`sum(sessions)`;
  const cut =
    page === undefined
      ? sql``
      : sql`order by ${sql.join(rankOrder(count, sql`path`, sql`origin`), sql`, `)} limit ${page.limit + 1} offset ${page.offset}`;
  const weight = (measure: string) => sql`coalesce(sum(w.weight) filter (where w.measure = ${measure}), 0)`;
  return sql`(
    with masks as materialized (${dayMasks(scope, filters, scope.window)}),
    -- Materialized: flattened into the ranking, its strings would be sorted before they are counted.
    counted as materialized (
      select ${p.origin} as origin, ${p.path} as path, ${p.title} as title, bit_count(m.mask & ${p.sessions}) as sessions
      from masks m join ${p} on ${p.projectId} = ${scope.projectId} and ${p.day} = m.day
    ),
    ranked as materialized (
      -- A session has one title per page: the greatest of the matching sessions' is that of a string with a match.
      select origin, path, max(title) filter (where sessions > 0) as title, ${count} as sessions
      from counted group by origin, path having ${count} > 0
      ${cut}
    ),
    -- Per ranked page and day, its slices by index, each ANDed and counted where it is read:
    -- joined and grouped over the window, the strings were sorted to disk first.
    weights as (
      select r.origin, r.path, w.measure, sum(w.weight) as weight
      from ranked r cross join masks m cross join lateral (
        select ${s.measure} as measure, ${slicedSum(sql`m.mask`, s.slice, s.sessions)} as weight
        from ${s}
        where ${s.projectId} = ${scope.projectId} and ${s.day} = m.day and ${samePage(s, RANKED)}
        group by ${s.measure}
      ) as w
      group by r.origin, r.path, w.measure
    )
    select r.title, r.origin, r.path, r.sessions, r.sessions + ${weight("repeat_views")} as pageviews,
      ${weight("bounce")} as bounces, ${weight("duration_ms")} as duration_ms, ${weight("timed_views")} as timed_views
    from ranked r left join weights w on ${samePage({ origin: sql`w.origin`, path: sql`w.path` }, RANKED)}
    group by r.title, r.origin, r.path, r.sessions
  ) as rows`;
}
