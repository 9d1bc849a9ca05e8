import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { events } from "../../db/schema";
import type { FilterColumn } from "../../lib/filter-parser";
import { eventColumn } from "../columns";
import { breakdownValue, type ChartSeriesQuery } from "./model";
import { newSeriesEvents, sameAmounts, unitColumns } from "./units";

/**
 * The `user` and `session` segments on the rollup path: the day rows count each day's distinct
 * visitors (or sessions) per event name and values, over the events below the watermark. The
 * events at or above it add the members those rows do not count yet: per local day and breakdown
 * value, each visitor (or session) with a new matching event and no earlier event (below the
 * watermark) of that day with the same name and values. A day's earlier events of one visitor are
 * found through the events' (project, profile, time) index, a session's through (project, session).
 */

/** The segments the day rows count distinct members for: visitors and sessions. */
export type DistinctSegment = "user" | "session";

export const isDistinctSegment = (segment: string): segment is DistinctSegment =>
  segment === "user" || segment === "session";

const earlier = alias(events, "earlier");

/** A segment's member column: the visitor's profile id, or the session id. */
const memberOf = (segment: DistinctSegment, table: typeof events | typeof earlier) =>
  segment === "user" ? table.profileId : table.sessionId;

/**
 * The new members as units of one, each at its first new event of the day: `columns` are the
 * row's columns besides the name, `timeZone` the zone of the rows' days.
 */
export function newMemberUnits(
  db: Database,
  query: ChartSeriesQuery & { segment: DistinctSegment },
  columns: FilterColumn[],
  timeZone: string,
  watermark: number,
) {
  const member = memberOf(query.segment, events);
  // The event's local date, and a range of instants around it that narrows the index read. Where
  // midnight happens twice (Havana falls back from 01:00 to 00:00) Postgres resolves the date's
  // midnight to the second, so the range starts half a day before it, as the pair rows' refresh
  // reads (src/db/routines/refresh_event_pair_rollups.sql), and the date itself is compared.
  const localDay = sql`date_trunc('day', ${events.createdAt} at time zone ${timeZone})`;
  const dayStart = sql`((${localDay} at time zone ${timeZone}) - interval '12 hours')`;
  const dayEnd = sql`((${localDay} + interval '1 day') at time zone ${timeZone})`;
  const sameValues: SQL[] = columns.map(
    (column) =>
      sql`nullif(${eventColumn(column, earlier)}, '') is not distinct from nullif(${eventColumn(column)}, '')`,
  );
  const countedBefore = db
    .select({ one: sql`1` })
    .from(earlier)
    .where(
      and(
        eq(earlier.projectId, events.projectId),
        eq(memberOf(query.segment, earlier), member),
        lt(earlier.ingestXid, watermark),
        gte(earlier.createdAt, dayStart),
        lt(earlier.createdAt, dayEnd),
        sql`date_trunc('day', ${earlier.createdAt} at time zone ${timeZone}) = ${localDay}`,
        eq(earlier.name, events.name),
        ...sameValues,
      ),
    );
  return (
    db
      .select(
        unitColumns(
          sql`min(${events.createdAt})`,
          breakdownValue(query.breakdowns[0]),
          sql`1`,
          sameAmounts(sql`0`),
        ),
      )
      .from(events)
      .where(and(newSeriesEvents(query, watermark), sql`not exists (${countedBefore})`))
      // By position, the breakdown value (b0): the same expression spelled again is a new one.
      .groupBy(localDay, sql`2`, member)
  );
}
