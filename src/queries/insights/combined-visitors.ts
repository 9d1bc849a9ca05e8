import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { VISITOR_CHUNK_BITS, visitorDayMixed } from "../../db/schema";
import { timestampArray, toNumber } from "../sql-helpers";
import type { BitStringFilter, Numeric, SessionScope } from "./model";
import { dayMasks, dayVisitors } from "./session-masks";
import type { VisitorCounts } from "./visitors";

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
 * src/db/routines/day_block_bits.sql); a visitor the strings count in a bucket on no such day is taken off
 * the bucket's count. No session is read.
 */
export async function combinedVisitors(
  db: Database,
  scope: SessionScope,
  filters: readonly BitStringFilter[],
  buckets: number[],
): Promise<VisitorCounts> {
  const window = { start: new Date(scope.window.start), end: new Date(scope.window.end) };
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
      select case when grouping(bucket) = 1 then 0 else bucket end as bucket, bit_count(bit_or(visitors)) as visitors
      from matched group by grouping sets ((bucket, chunk), (chunk))
    ),
    suspects as (
      select distinct ${m.ordinal} as ordinal from ${m}
      join matched x on x.day = ${m.day}
        and ${m.ordinal} between x.chunk * ${VISITOR_CHUNK_BITS} and x.chunk * ${VISITOR_CHUNK_BITS} + ${VISITOR_CHUNK_BITS - 1}
        and ${counts(m.ordinal)}
      where ${m.projectId} = ${scope.projectId} and ${m.day} >= ${window.start} and ${m.day} < ${window.end}
        and ${m.dimension} in (${dimensions})
    ),
    -- The suspects of each chunk as one list: each matched string is joined to its chunk's list
    -- (joined one suspect at a time, the planner tested every suspect against every string).
    suspect_chunks as materialized (
      select ${chunkOf(sql`ordinal`)} as chunk, array_agg(ordinal) as ordinals from suspects group by 1
    ),
    -- The day's matching sessions, per block, to check the suspects against.
    masks as materialized (${dayMasks(scope, filters, scope.window)}),
    -- Each day the strings count a suspect, and whether that is sure: it has one value of every
    -- filtered dimension that day (no listed row: all its sessions then match), or one of its
    -- sessions is in its block's mask. The masks are joined once per matched string, not looked
    -- up per suspect; a session is tested against its own block's only (CASE: get_bit past the
    -- end of another block's mask would fail).
    suspect_days as materialized (
      select s.ordinal, x.bucket, bool_or(coalesce((
        select bool_or(case when t.session / day_block_bits() = k.block
          then get_bit(k.mask, t.session % day_block_bits()) = 1 else false end)
        from ${m} cross join lateral unnest(${m.sessions}) as t(session)
        where ${m.projectId} = ${scope.projectId} and ${m.day} = x.day and ${m.ordinal} = s.ordinal
          and ${m.dimension} in (${dimensions})
      ), true)) as sure
      from matched x join masks k on k.day = x.day
      join suspect_chunks c on c.chunk = x.chunk
      cross join lateral unnest(c.ordinals) as s(ordinal)
      where ${counts(sql`s.ordinal`)}
      group by s.ordinal, x.bucket, x.day
    ),
    -- Counted by the strings on days that are not sure only, in a bucket and in the window.
    overcounted as (
      select bucket, -count(*) as visitors from (
        select ordinal, bucket from suspect_days group by ordinal, bucket having not bool_or(sure)
      ) as wrong group by bucket
      union all
      select 0, -count(*) from (select ordinal from suspect_days group by ordinal having not bool_or(sure)) as wrong
    )
    select bucket, sum(visitors) as visitors from (select * from counted union all select * from overcounted) as parts group by bucket`);
  return new Map(result.rows.map((row) => [Number(row.bucket), toNumber(row.visitors)]));
}
