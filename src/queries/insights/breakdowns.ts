import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessions } from "../../db/schema";
import { type BreakdownDimension, DIMENSION_PREFIXES } from "../../lib/dimensions";
import { sessionColumn } from "../columns";
import { rankOrder } from "../sql-helpers";
import { windowParts } from "./day-parts";
import {
  type BreakdownRow,
  bitStringFilters,
  breakdownRollupsCover,
  type Page,
  pairRollupsFilter,
  type SessionScope,
  toBreakdownRow,
} from "./model";
import { pairBreakdown } from "./pair-breakdown";
import { rankedBreakdown } from "./ranked-rows";
import { rolledUpBreakdown } from "./rollups";
import { maskedBreakdownRows } from "./session-bits";
import { bitStringsCover } from "./session-masks";
import { metricColumns, sessionsInScope } from "./session-scope";

/**
 * Sessions grouped by one of their attributes (the first event's). Empty strings count as
 * "not set" together with NULL, so direct traffic is one row named null.
 */
export async function sessionBreakdown(
  db: Database,
  scope: SessionScope,
  dimension: BreakdownDimension,
  page: Page,
): Promise<BreakdownRow[]> {
  const withPrefix = DIMENSION_PREFIXES[dimension] !== undefined;
  if (breakdownRollupsCover(scope, dimension))
    return rolledUpBreakdown(db, scope, dimension, withPrefix, page);
  const pairFilter = pairRollupsFilter(scope, dimension);
  if (pairFilter) return pairBreakdown(db, scope, pairFilter, dimension, withPrefix, page);
  const combined = bitStringFilters(scope);
  if (combined && (await bitStringsCover(db, scope, [], windowParts(scope)))) {
    // The rows are the page already (and one more); ranked again, from their start.
    const rows = await maskedBreakdownRows(db, scope, combined, dimension, page);
    return rankedBreakdown(db, rows, withPrefix, { offset: 0, limit: page.limit });
  }
  return exactBreakdown(db, scope, dimension, page);
}

async function exactBreakdown(
  db: Database,
  scope: SessionScope,
  dimension: BreakdownDimension,
  page: Page,
): Promise<BreakdownRow[]> {
  const prefixedBy = DIMENSION_PREFIXES[dimension];
  const name = sql<string | null>`nullif(${sessionColumn(dimension)}, '')`;
  const prefix = prefixedBy ? sql<string | null>`nullif(${sessionColumn(prefixedBy)}, '')` : undefined;
  const sessionCount = sql<string>`count(*)`;
  const sessionAggregates = metricColumns(sessions);
  const rows = await db
    .select({
      name,
      prefix: prefix ?? sql<null>`null`,
      sessions: sessionCount,
      pageviews: sessionAggregates.total_screen_views,
      bounce_rate: sessionAggregates.bounce_rate,
      avg_session_duration: sessionAggregates.avg_session_duration,
      revenue: sessionAggregates.total_revenue,
    })
    .from(sessions)
    .where(sessionsInScope(scope))
    .groupBy(...(prefix ? [name, prefix] : [name]))
    .orderBy(...rankOrder(sessionCount, name, ...(prefix ? [prefix] : [])))
    .limit(page.limit + 1)
    .offset(page.offset);
  return rows.map((row) => toBreakdownRow(row, prefix !== undefined));
}
