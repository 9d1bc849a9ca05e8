import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { eventRollups, events } from "../../db/schema";
import { HOUR_MS } from "../../lib/timezone";
import { eventRollupsWatermark } from "../charts/rollups";
import { toNumber } from "../sql-helpers";
import { type EventExportScope, type EventPosition, positionRow, scopeConditions } from "./events";

/**
 * The totals of an export page (`meta.totalCount`, `pages`, `current`): how many events match the
 * scope, and how many of them a page starting after `position` has already passed (those up to and
 * including the position's own event; 0 without one).
 *
 * Without filters and without a profile they come from the hourly event rollups (the `''`
 * dimension: one row per hour and name) for the whole hours of the window, the events of its
 * partial first and last hour from the time index, and the events the rollups do not hold yet
 * (ingest_xid at or above their watermark): exact at any moment, and the cost of a few hundred
 * rollup rows instead of a count over the window on every page. A profile's events are counted
 * through its own index; other filters need the events themselves (the rollups hold no filtered
 * counts), one count over the window.
 */
export async function countExportedEvents(
  db: Database,
  scope: EventExportScope,
  position: EventPosition | undefined,
): Promise<{ total: number; before: number }> {
  const watermark =
    scope.filters.length > 0 || scope.profileId !== undefined ? 0 : await eventRollupsWatermark(db);
  if (watermark === 0) return countScanned(db, scope, position);
  const total = rolledUpCount(scope, watermark, scope.start, scope.end);
  const before = position
    ? sql`${rolledUpCount(scope, watermark, position.createdAt, scope.end)} - (select count(*) from ${events} where ${and(
        scopeConditions(scope),
        eq(events.createdAt, new Date(position.createdAt)),
        lt(events.id, position.id),
      )})`
    : sql`0`;
  const result = await db.execute<{ total: string | number; before: string | number }>(
    sql`select ${total} as total, ${before} as before`,
  );
  const row = result.rows[0];
  return { total: toNumber(row?.total), before: toNumber(row?.before) };
}

/** The scope's names on a column holding them (an event's, or a rollup row's). */
const namesOf = (scope: EventExportScope, name: AnyPgColumn) =>
  scope.names.length > 0 ? sql`${name} = any(${sql.param(scope.names)}::text[])` : undefined;

/** Events of the scope (no filters, no profile) in [from, to), either bound open, as one SQL sum. */
function rolledUpCount(scope: EventExportScope, watermark: number, from?: number, to?: number): SQL {
  const wholeFrom = from === undefined ? undefined : Math.ceil(from / HOUR_MS) * HOUR_MS;
  const wholeTo = to === undefined ? undefined : Math.floor(to / HOUR_MS) * HOUR_MS;
  const hasWholeHours = wholeFrom === undefined || wholeTo === undefined || wholeFrom < wholeTo;
  const at = (ms: number) => new Date(ms);
  const span = (start: number | undefined, end: number | undefined) =>
    and(
      start === undefined ? undefined : gte(events.createdAt, at(start)),
      end === undefined ? undefined : lt(events.createdAt, at(end)),
    );
  const ofScope = and(eq(events.projectId, scope.projectId), namesOf(scope, events.name));
  const counted = (...conditions: Array<SQL | undefined>) =>
    sql`(select count(*) from ${events} where ${and(ofScope, ...conditions)})`;
  const parts: SQL[] = [];
  if (hasWholeHours) {
    parts.push(
      sql`(select coalesce(sum(${eventRollups.events}), 0) from ${eventRollups} where ${and(
        eq(eventRollups.projectId, scope.projectId),
        eq(eventRollups.dimension, ""),
        namesOf(scope, eventRollups.name),
        wholeFrom === undefined ? undefined : gte(eventRollups.hour, at(wholeFrom)),
        wholeTo === undefined ? undefined : lt(eventRollups.hour, at(wholeTo)),
      )})`,
    );
    // The partial first and last hour, as far as the rollups hold them.
    if (from !== undefined && wholeFrom !== undefined && from < wholeFrom) {
      parts.push(counted(span(from, wholeFrom), lt(events.ingestXid, watermark)));
    }
    if (to !== undefined && wholeTo !== undefined && wholeTo < to) {
      parts.push(counted(span(wholeTo, to), lt(events.ingestXid, watermark)));
    }
  } else {
    parts.push(counted(span(from, to), lt(events.ingestXid, watermark)));
  }
  // What the rollups do not hold yet, reached through the ingest_xid index.
  parts.push(counted(span(from, to), gte(events.ingestXid, watermark)));
  return sql`(${sql.join(parts, sql` + `)})`;
}

/** One count over the scope's events, and of those the position has passed. */
async function countScanned(
  db: Database,
  scope: EventExportScope,
  position: EventPosition | undefined,
): Promise<{ total: number; before: number }> {
  const before = position
    ? sql<string>`count(*) filter (where (${events.createdAt}, ${events.id}) >= ${positionRow(position)})`
    : sql<string>`0`;
  const [row] = await db
    .select({ total: sql<string>`count(*)`, before })
    .from(events)
    .where(scopeConditions(scope));
  return { total: toNumber(row?.total), before: toNumber(row?.before) };
}
