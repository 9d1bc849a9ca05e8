import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { eventDayBits, eventDayFirstPages, eventDayFirsts, events } from "../../db/schema";
import type { FilterField } from "../../lib/filter-parser";
import { inStringDays } from "../day-strings";
import { type BucketPart, chartBuckets, inBucketPart } from "./bucket-parts";
import { breakdownGroups, type EventBitsSource, matchingMasks, setBitPositions } from "./event-bits";
import {
  type BucketValues,
  breakdownValue,
  bucketValues,
  type ChartSeriesQuery,
  periodAndBucket,
  scanStart,
  unitBucketKeys,
} from "./model";
import type { DistinctSegment } from "./new-members";
import { newSeriesEvents } from "./units";

/**
 * The distinct visitors or sessions of a chart's one-day buckets from each member's first event
 * of the day (src/db/routines/refresh_event_bits.sql keeps them): per (day, member) a
 * representative, its lowest-numbered event, with its bit in the day's `first:<segment>` string,
 * and per column (the name too) the events whose value differs from their representative's
 * (`deviant:<segment>`). A member with a matching event of a group (the day and a breakdown value)
 * either has its representative matching, counted by the bit count of the group's events AND the
 * representatives, or has a matching event that differs from its representative in a column the
 * chart reads, its series' name included (else the representative would match too). So a group's count is that bit count plus the distinct
 * representatives, not matching, of its matching deviants of those columns: work per day and per
 * matching deviant, where the lookups of event-members.ts work per matching event. Exact, with the
 * members' hashes as event-members.ts counts them.
 *
 * The events at or above the strings' watermark are hashed as they are read, and each counts
 * unless its member already does: it has a representative in the group's day whose bit, or one of
 * whose matching deviants' bits, is set in the group's events. Only groups with a member have
 * rows, as on the exact path.
 */

/** A column the strings' deviants are kept for (the name and the chart columns), or undefined for a property. */
const deviantColumn = (field: FilterField | undefined): string | undefined =>
  field?.kind === "column" ? field.column : undefined;

/**
 * Whether the representatives answer a covered `user` or `session` series (eventBitsSource):
 * column filters only (no deviants are kept per property path), and every bucket one day of the
 * strings' zone.
 */
export function eventFirstsCover(query: ChartSeriesQuery, timeZone: string): boolean {
  return (
    query.filters.every((filter) => filter.field.kind === "column") &&
    chartBuckets(query, timeZone).every((bucket) => bucket.days.length === 1)
  );
}

/** The columns the chart reads: its filters', its breakdown's, and the name of a named event's series. */
function readColumns(query: ChartSeriesQuery): string[] {
  const columns = [...query.filters.map((filter) => filter.field), ...query.breakdowns].map(deviantColumn);
  if (query.event !== "*") columns.push("name");
  return [...new Set(columns.filter((column): column is string => column !== undefined))];
}

/**
 * Per day (`unit`, its local midnight) and breakdown value, the distinct members of the series:
 * rows `unit`, `b0`, `members`, of the part's days only with one.
 */
function dayMembers(
  query: ChartSeriesQuery & { segment: DistinctSegment },
  source: EventBitsSource,
  part: BucketPart | undefined,
): SQL {
  const { projectId, segment } = query;
  const days = inStringDays(eventDayBits.day, {
    start: scanStart(query),
    end: query.current.window.end,
    days: part?.days,
  });
  const columns = readColumns(query);
  // The days' strings of the deviants of the columns read, ORed per block.
  const deviantStrings = sql`select ${eventDayBits.day} as day, ${eventDayBits.block} as block,
      bit_or(${eventDayBits.events}) as events
    from ${eventDayBits}
    where ${eventDayBits.projectId} = ${projectId} and ${eventDayBits.dimension} = ${`deviant:${segment}`}
      and ${eventDayBits.name} = any(${sql.param(columns)}::text[]) and ${days}
    group by 1, 2`;
  // A stored string is made once in memory (`events & events`): read by a reference per group, it
  // would be taken out of its compressed TOAST copy again at each.
  const firsts = sql`select ${eventDayBits.day} as day, ${eventDayBits.block} as block,
      ${eventDayBits.events} & ${eventDayBits.events} as events
    from ${eventDayBits}
    where ${eventDayBits.projectId} = ${projectId} and ${eventDayBits.dimension} = ${`first:${segment}`}
      and ${eventDayBits.name} is null and ${days}`;
  const memberId = segment === "user" ? events.profileId : events.sessionId;
  const newEvents = sql`select date_trunc('day', ${events.createdAt}, ${source.timeZone}) as day,
      ${breakdownValue(query.breakdowns[0])} as b0, hashtextextended(${memberId}, 0) as member
    from ${events}
    where ${newSeriesEvents(query, source.watermark)}
      ${part ? sql`and ${inBucketPart(periodAndBucket(events.createdAt, query), part)}` : sql``}`;
  // Whether a representative's bit (at number `rep`) is set in the events of group `g`'s value on its day.
  const repMatches = (rep: SQL) => sql`exists (select 1 from groups h where h.day = g.day
    and h.b0 is not distinct from g.b0 and h.block = ${rep} / day_block_bits()
    and get_bit(h.events, ${rep} % day_block_bits()) = 1)`;
  return sql`
    with masks as materialized (${matchingMasks(query, part?.days)}),
    groups as materialized (${breakdownGroups(query, sql`masks`)}),
    deviants as materialized (
      select m.day, m.block * day_block_bits() + r.position as number
      from masks m
      join (${deviantStrings}) as d on d.day = m.day and d.block = m.block
      cross join lateral (select m.mask & d.events as events) as x
      cross join lateral ${setBitPositions(sql`x.events`)} as r
      where bit_count(x.events) > 0
    ),
    reps as materialized (
      select n.day, e.number, p.firsts[e.entry] as rep
      from (
        select day, number / member_page_events() as page, array_agg(number % member_page_events() + 1) as entries,
          array_agg(number) as numbers
        from deviants group by 1, 2
      ) as n
      join ${eventDayFirstPages} as p on p.project_id = ${projectId} and p.segment = ${segment}
        and p.day = n.day and p.page = n.page
      cross join lateral unnest(n.entries, n.numbers) as e(entry, number)
    ),
    firsts as materialized (${firsts})
    select g.day as unit, g.b0, sum(bit_count(g.events & f.events)) as members
    from groups g join firsts f on f.day = g.day and f.block = g.block
    group by 1, 2 having sum(bit_count(g.events & f.events)) > 0
    union all
    select g.day, g.b0, count(distinct r.rep)
    from reps r join groups g on g.day = r.day and g.block = r.number / day_block_bits()
    where get_bit(g.events, r.number % day_block_bits()) = 1
      and case when r.rep / day_block_bits() = g.block then get_bit(g.events, r.rep % day_block_bits()) = 0
        else not ${repMatches(sql`r.rep`)} end
    group by 1, 2
    union all
    select g.day, g.b0, count(distinct g.member)
    from (${newEvents}) as g
    left join ${eventDayFirsts} as f on f.project_id = ${projectId} and f.segment = ${segment}
      and f.day = g.day and f.member = g.member
    where f.number is null or not (${repMatches(sql`f.number`)} or exists (
      select 1 from reps r join groups h on h.day = r.day and h.block = r.number / day_block_bits()
      where r.day = g.day and r.rep = f.number and h.b0 is not distinct from g.b0
        and get_bit(h.events, r.number % day_block_bits()) = 1))
    group by 1, 2`;
}

/**
 * The bucket values of a `user` or `session` series the representatives answer (eventFirstsCover):
 * each bucket one day, its value the day's members per breakdown value (of a part's buckets only, with one).
 */
export function firstMemberCounts(
  db: Database,
  query: ChartSeriesQuery & { segment: DistinctSegment },
  source: EventBitsSource,
  part?: BucketPart,
): BucketValues {
  const days = db
    .select({
      unit: sql<Date>`unit`.as("unit"),
      b0: sql<string | null>`b0`.as("b0"),
      members: sql<string>`members`.as("members"),
    })
    .from(sql`(${dayMembers(query, source, part)}) as day_members`)
    .as("day_members");
  const bucketed = db
    .select({ ...unitBucketKeys(query, days.unit, days.b0), members: days.members })
    .from(days)
    .as("bucketed");
  return bucketValues(db, bucketed, sql`sum(${bucketed.members})::numeric`);
}
