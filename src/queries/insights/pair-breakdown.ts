import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessionPairRollups, sessions } from "../../db/schema";
import {
  BREAKDOWN_DIMENSIONS,
  type BreakdownDimension,
  DIMENSION_PREFIXES,
  isMultiValuedDimension,
} from "../../lib/dimensions";
import { sessionColumn } from "../columns";
import { dimensionValueCondition } from "../filter-conditions";
import type { BreakdownRow, DimensionFilter, Page, SessionScope } from "./model";
import { rankedBreakdown } from "./ranked-rows";
import { sessionsInScope } from "./session-scope";
import { daysWithExactParts, projectDaysBuilt } from "./window-rows";

/**
 * A breakdown under a filter on another dimension: the whole project days of the window from the
 * pair rollups (src/db/routines/refresh_pair_rollups.sql), the rows of the filter's values paired
 * with the breakdown's; the hours around them, or the days while their rows are not built, from
 * the matching sessions. The same numbers as the exact path (breakdowns.ts), reading per day a
 * row per pair of values rather than the day's sessions.
 */
export async function pairBreakdown(
  db: Database,
  scope: SessionScope,
  { dimension: filterDimension, filter }: DimensionFilter,
  dimension: BreakdownDimension,
  withPrefix: boolean,
  page: Page,
): Promise<BreakdownRow[]> {
  const p = sessionPairRollups;
  // A pair's rows are stored once, the dimension that comes first in the rollup order first; the
  // rows of the paths and names always first.
  const filterFirst =
    isMultiValuedDimension(filterDimension) ||
    BREAKDOWN_DIMENSIONS.indexOf(filterDimension) < BREAKDOWN_DIMENSIONS.indexOf(dimension);
  const [first, second] = filterFirst ? [filterDimension, dimension] : [dimension, filterDimension];
  const filtered = filterFirst ? p.name : p.byName;
  const [name, prefix] = filterFirst ? [p.byName, p.byPrefix] : [p.name, p.prefix];
  const prefixedBy = DIMENSION_PREFIXES[dimension];
  const rows = daysWithExactParts(
    scope,
    await projectDaysBuilt(db, scope),
    (whole) => sql`
      select ${name} as name, ${prefix} as prefix, ${p.sessions} as sessions, ${p.bounces} as bounces,
        ${p.screenViews} as screen_views, ${p.durationMs} as duration_ms, ${p.timedSessions} as timed_sessions,
        ${p.revenue} as revenue
      from ${p}
      where ${p.projectId} = ${scope.projectId} and ${p.dimension} = ${first} and ${p.byDimension} = ${second}
        and ${p.day} >= ${new Date(whole.start)} and ${p.day} < ${new Date(whole.end)}
        and ${dimensionValueCondition(filter, filtered)}`,
    (window) => sql`
      select nullif(${sessionColumn(dimension)}, '') as name,
        ${prefixedBy ? sql`nullif(${sessionColumn(prefixedBy)}, '')` : sql`null::text`} as prefix,
        1 as sessions, ${sessions.isBounce}::int as bounces, ${sessions.screenViewCount} as screen_views,
        greatest(${sessions.durationMs}, 0) as duration_ms, (${sessions.durationMs} > 0)::int as timed_sessions,
        ${sessions.revenue} as revenue
      from ${sessions}
      where ${sessionsInScope({ ...scope, window })}`,
  );
  return rankedBreakdown(db, sql`(${rows}) as rows`, withPrefix, page);
}
