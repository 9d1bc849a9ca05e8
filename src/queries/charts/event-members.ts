import { and, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { eventDayMembers, events } from "../../db/schema";
import { textColumns } from "../statement-parts";
import { type BucketPart, bucketParts, inBucketPart } from "./bucket-parts";
import { type EventBitsSource, matchingEvents, setBitPositions } from "./event-bits";
import { eventFirstsCover, firstMemberCounts } from "./event-firsts";
import {
  type BucketValues,
  breakdownValue,
  bucketValues,
  type ChartSeriesQuery,
  periodAndBucket,
  unitBucketKeys,
} from "./model";
import type { DistinctSegment } from "./new-members";
import { newSeriesEvents } from "./units";

/**
 * The `user` and `session` segments of a chart the event strings cover (event-bits.ts): a distinct
 * count needs each matching event's visitor or session, which the strings do not say. The day's
 * events' hashes of each are kept per page of their numbers (event_day_members, written with the
 * strings by src/db/routines/refresh_event_bits.sql), so the positions of a block's set bits are
 * looked up there and the distinct hashes counted per bucket and breakdown value. The cost follows
 * the matching events and the pages they fall in, not the window's events: the strings find
 * them, and a page of 896 is read once for all of its entries. The events at or above the strings' watermark are hashed as they are read, so
 * every member is counted once whichever side holds it.
 */

/** The hash the refresh keeps of a member id (hashtextextended, seed 0). */
const memberHash = (id: PgColumn) => sql`hashtextextended(${id}, 0)`;

/** Each matching event of the series as (day, b0, number): its day's number, from the strings. */
function matchingEventNumbers(query: ChartSeriesQuery, part: BucketPart | undefined): SQL {
  return sql`
    select g.day, g.b0, g.block * day_block_bits() + r.position as number
    from (${matchingEvents(query, part?.days)}) as g
    cross join lateral ${setBitPositions(sql`g.events`)} as r
    where bit_count(g.events) > 0`;
}

/**
 * The units counted: an instant, a breakdown value and a member's hash, from the strings and the
 * new events; with a part, only those of its buckets.
 */
function memberUnits(
  db: Database,
  query: ChartSeriesQuery & { segment: DistinctSegment },
  watermark: number,
  part: BucketPart | undefined,
) {
  const pages = eventDayMembers;
  // The matching events grouped by the page they fall in, so that each page is probed once for
  // all of its entries (and breakdown values), whatever plan the join gets.
  const byPage = sql`
    select n.day, n.number / member_page_events() as page,
      array_agg(n.number % member_page_events() + 1) as entries, array_agg(n.b0) as values
    from (${matchingEventNumbers(query, part)}) as n group by 1, 2`;
  const fromStrings = sql`
    select p.day as unit, e.b0, ${pages.members}[e.entry] as member
    from (${byPage}) as p
    join ${pages} on ${pages.projectId} = ${query.projectId} and ${pages.segment} = ${query.segment}
      and ${pages.day} = p.day and ${pages.page} = p.page
    cross join lateral unnest(p.entries, p.values) as e(entry, b0)`;
  const id = query.segment === "user" ? events.profileId : events.sessionId;
  const fromEvents = db
    .select({
      unit: sql<Date>`${events.createdAt}`.as("unit"),
      b0: breakdownValue(query.breakdowns[0]).as("b0"),
      member: sql<string>`${memberHash(id)}`.as("member"),
    })
    .from(events)
    .where(
      and(
        newSeriesEvents(query, watermark),
        part ? inBucketPart(periodAndBucket(events.createdAt, query), part) : undefined,
      ),
    );
  return db
    .select({
      unit: sql<Date>`unit`.as("unit"),
      b0: sql<string | null>`b0`.as("b0"),
      member: sql<string>`member`.as("member"),
    })
    .from(sql`(${fromStrings} union all (${fromEvents})) as members`)
    .as("members");
}

/** Per period, bucket and breakdown value, the distinct members of the units (of a part's buckets only, with one). */
function memberCounts(
  db: Database,
  query: ChartSeriesQuery & { segment: DistinctSegment },
  source: EventBitsSource,
  part?: BucketPart,
): BucketValues {
  const units = memberUnits(db, query, source.watermark, part);
  const bucketed = db
    .select({ ...unitBucketKeys(query, units.unit, units.b0), member: units.member })
    .from(units)
    .as("bucketed");
  return bucketValues(db, bucketed, sql`count(distinct ${bucketed.member})::numeric`);
}

/**
 * The bucket values of a covered `user` or `session` series (eventBitsSource): per period, bucket
 * and breakdown value, the distinct members of its events. A bucket may span days: the hashes are
 * the same on every day, so a member of two days of it counts once. A long window's buckets are
 * counted in parts at once (bucket-parts.ts), each part's whole buckets by its own statement, and
 * their rows handed back as one FROM item: a distinct count per bucket is work per matching event
 * that one statement does on one core (90 days at 10M events: 595-930 ms in one, 266-531 in two).
 * Where every bucket is one day and every filter is on a column, each day's members are counted
 * from their representatives instead (event-firsts.ts): work per matching deviant, not per
 * matching event.
 */
export async function eventMemberBucketValues(
  db: Database,
  query: ChartSeriesQuery & { segment: DistinctSegment },
  source: EventBitsSource,
): Promise<BucketValues> {
  const counter = eventFirstsCover(query, source.timeZone) ? firstMemberCounts : memberCounts;
  const parts = bucketParts(query, source.timeZone);
  if (!parts) return counter(db, query, source);
  const counted = await Promise.all(
    parts.map((part) => {
      const counts = counter(db, query, source, part);
      return db
        .select({
          period: counts.period,
          bucket: counts.bucket,
          b0: counts.b0,
          value: sql<string>`${counts.value}::text`,
        })
        .from(counts);
    }),
  );
  const rows = counted.flat();
  return db
    .select({
      period: sql<number>`counted.period::int`.as("period"),
      bucket: sql<number>`counted.bucket::int`.as("bucket"),
      b0: sql<string | null>`counted.b0`.as("b0"),
      b1: sql<string | null>`null::text`.as("b1"),
      b2: sql<string | null>`null::text`.as("b2"),
      value: sql<string>`counted.value::numeric`.as("value"),
    })
    .from(
      sql`${textColumns(rows, ["period", "bucket", "b0", "value"])} as counted(period, bucket, b0, value)`,
    )
    .as("per_bucket");
}
