import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import { events } from "../../db/schema";
import { eventConditions } from "../filter-conditions";
import { type ChartSeriesQuery, scanStart } from "./model";

/**
 * The units of the rollup path (rollups.ts): a rollup row or an event not folded in yet, each
 * reduced to the same columns so that the two union and bucket alike.
 */

export type Operand = SQL | PgColumn;

/** The series' project, event name and scanned range (both periods), on either table. */
export function seriesRange(query: ChartSeriesQuery, time: PgColumn, projectId: PgColumn, name: PgColumn) {
  return and(
    eq(projectId, query.projectId),
    gte(time, new Date(scanStart(query))),
    lt(time, new Date(query.current.window.end)),
    query.event === "*" ? undefined : eq(name, query.event),
  );
}

/**
 * The series' events the rollups do not hold yet: at or above the watermark, in its range and
 * passing its filters. The watermark is a literal, not a subquery: the planner then sees how few
 * events lie above it and reaches them through the ingest_xid index instead of the whole window.
 */
export function newSeriesEvents(query: ChartSeriesQuery, watermark: number) {
  return and(
    seriesRange(query, events.createdAt, events.projectId, events.name),
    gte(events.ingestXid, watermark),
    eventConditions(query.filters),
  );
}

/** One operand as every amount aggregate of a unit (an event's own amount, or none). */
export const sameAmounts = (amount: Operand) => ({ sum: amount, min: amount, max: amount });

/**
 * The columns every unit has: its instant, breakdown value, count (events, or distinct visitors
 * or sessions) and amount aggregates.
 */
export function unitColumns(
  start: Operand,
  value: Operand,
  count: Operand,
  amount: { sum: Operand; min: Operand; max: Operand },
) {
  return {
    unit: sql<Date>`${start}`.as("unit"),
    b0: sql<string | null>`${value}`.as("b0"),
    events: sql<number>`${count}`.as("events"),
    amountSum: sql<string>`${amount.sum}`.as("amount_sum"),
    amountMin: sql<string>`${amount.min}`.as("amount_min"),
    amountMax: sql<string>`${amount.max}`.as("amount_max"),
  };
}
