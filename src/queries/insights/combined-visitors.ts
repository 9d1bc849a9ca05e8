import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { VISITOR_CHUNK_BITS, visitorDayMixed } from "../../db/schema";
import { timestampArray, toNumber } from "../sql-helpers";
import type { BitStringFilter, Numeric, SessionScope } from "./model";
import { dayMasks, dayVisitors } from "./session-masks";
import { bucketOrWindow, type VisitorCounts } from "./visitors";

/**
 * Unique visitors under two or three filters, exact, from the visitor strings per project day
 * (src/db/routines/refresh_session_bits.sql): per day and chunk of visitors, the OR of the strings
 * of the values each filter keeps, ANDed over the filters, then ORed over the days of each bucket
 * and of the window and counted.
 *
 * The AND per day also finds a visitor whose sessions of a day match the filters only between
 * them (a Norwegian session and another on mobile, none both). Such a visitor has two values of
 * a filtered dimension that day, so is listed in visitor_day_mixed with the day ordinals of its
 * sessions. A listed visitor counts on that day only if one of those sessions is in the day's
 * mask (session-masks.ts: a mask per block of day_block_bits() numbers,
 * src/db/routines/day_block_bits.sql); a visitor the strings count in a bucket on such wrong days
 * only is taken off the bucket's count. Each listed row is checked once, and only the visitors with
 * a wrong day are looked up on the bucket's other days (most listed visitors have a matching
 * session: checking every listed visitor on every day it is counted cost most of the answer). No
 * session is read.
 */
export async function combinedVisitors(
  db: Database,
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  buckets: number[],
): Promise<VisitorCounts> {
  const edges = timestampArray(buckets);
  const chunkOf = (ordinal: SQL | AnyPgColumn) => sql`${ordinal} / ${VISITOR_CHUNK_BITS}`;
  const counts = (ordinal: SQL | AnyPgColumn) =>
    sql`get_bit(x.visitors, ${ordinal} % ${VISITOR_CHUNK_BITS}) = 1`;
  const m = visitorDayMixed;
  const dimensions = sql.join(
    filters.map(({ dimension }) => sql`${dimension}`),
    sql`, `,
  );
  const result = await db.execute<{ bucket: number; visitors: Numeric }>(sql`
    with matched as materialized (
      select width_bucket(day, ${edges}) as bucket, day, chunk, visitors
      from (${dayVisitors(scope, filters, scope.window)}) as combined
    ),
    counted as (
      select ${bucketOrWindow} as bucket, bit_count(bit_or(visitors)) as visitors
      from matched group by grouping sets ((bucket, chunk), (chunk))
    ),
    -- The day's matching sessions, per block, to check the listed visitors against.
    masks as materialized (${dayMasks(scope, filters, scope.window)}),
    -- The listed visitors the strings count on a day, once each (every row of a visitor and day
    -- lists the same sessions, whichever dimension it is of).
    listed as (
      select distinct on (${m.ordinal}, x.day) ${m.ordinal} as ordinal, x.day, x.bucket, ${m.sessions} as sessions
      from matched x join ${m} on ${m.projectId} = ${scope.projectId} and ${m.day} = x.day
        and ${m.dimension} in (${dimensions})
        and ${m.ordinal} between x.chunk * ${VISITOR_CHUNK_BITS} and x.chunk * ${VISITOR_CHUNK_BITS} + ${VISITOR_CHUNK_BITS - 1}
        and ${counts(m.ordinal)}
    ),
    -- Those of them none of whose sessions that day is in its block's mask: counted by the
    -- strings on that day and wrongly. A session is tested against its own block's mask only
    -- (CASE: get_bit past the end of another block's mask would fail).
    unsure as materialized (
      select l.ordinal, l.day, l.bucket from listed l
      where not exists (
        select from masks k cross join lateral unnest(l.sessions) as t(session)
        where k.day = l.day and case when t.session / day_block_bits() = k.block
          then get_bit(k.mask, t.session % day_block_bits()) = 1 else false end
      )
    ),
    -- Each wrongly counted visitor's chunk as one list, joined to the chunk's strings (joined one
    -- visitor at a time, the planner tested every visitor against every string).
    unsure_chunks as materialized (
      select ${chunkOf(sql`ordinal`)} as chunk, array_agg(distinct ordinal) as ordinals from unsure group by 1
    ),
    -- Each such visitor's days counted by the strings, beside its wrong days (a subset of them).
    -- Tallied by grouping, not matched by an anti-join: the planner takes every CTE for one row and
    -- would test each pair by a nested loop.
    tallied as (
      select s.ordinal, x.bucket, 1 as counted, 0 as wrong
      from matched x join unsure_chunks c on c.chunk = x.chunk
      cross join lateral unnest(c.ordinals) as s(ordinal)
      where ${counts(sql`s.ordinal`)}
      union all
      select ordinal, bucket, 0, 1 from unsure
    ),
    -- Counted by the strings on wrong days only, in a bucket and in the window.
    overcounted as (
      select bucket, -count(*) as visitors from (
        select ${bucketOrWindow} as bucket
        from tallied group by grouping sets ((ordinal, bucket), (ordinal))
        having sum(counted) = sum(wrong)
      ) as wrong group by bucket
    )
    select bucket, sum(visitors) as visitors from (select * from counted union all select * from overcounted) as parts group by bucket`);
  return new Map(result.rows.map((row) => [Number(row.bucket), toNumber(row.visitors)]));
}
