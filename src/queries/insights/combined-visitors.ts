import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import {
  sessions,
  VISITOR_CHUNK_BITS,
  visitorDayBits,
  visitorDayMixed,
  visitorOrdinals,
} from "../../db/schema";
import { dimensionValueCondition, sessionConditions } from "../filter-conditions";
import { timestampArray, toNumber } from "../sql-helpers";
import type { DimensionFilter, Numeric, SessionScope } from "./model";
import type { VisitorCounts } from "./visitors";

/**
 * Unique visitors under two or three filters, exact, from the visitor strings per project day
 * (src/db/routines/refresh_session_bits.sql): per day and chunk of visitors, the OR of the strings
 * of the values each filter keeps, ANDed over the filters, then ORed over the days of each bucket
 * and of the window and counted.
 *
 * The AND per day also finds a visitor whose sessions of a day match the filters only between
 * them (a Norwegian session and another on mobile, none both). Such a visitor has two values of
 * a filtered dimension that day, so is listed in visitor_day_mixed; each listed visitor the
 * strings count is checked against its sessions, and those with no session that matches every
 * filter in a bucket are taken off that bucket's count.
 */
export async function combinedVisitors(
  db: Database,
  scope: SessionScope,
  filters: readonly DimensionFilter[],
  buckets: number[],
): Promise<VisitorCounts> {
  const v = visitorDayBits;
  const window = { start: new Date(scope.window.start), end: new Date(scope.window.end) };
  const edges = timestampArray(buckets);
  const kept = filters.map(
    ({ dimension, filter }, index) => sql`
      select ${index} as filter, ${v.day} as day, ${v.chunk} as chunk, ${v.visitors} as visitors from ${v}
      where ${v.projectId} = ${scope.projectId} and ${v.dimension} = ${dimension}
        and ${v.day} >= ${window.start} and ${v.day} < ${window.end}
        and ${dimensionValueCondition(filter, v.name)}`,
  );
  const chunkOf = (ordinal: SQL | AnyPgColumn) => sql`${ordinal} / ${VISITOR_CHUNK_BITS}`;
  const counts = (ordinal: SQL | AnyPgColumn) =>
    sql`get_bit(x.visitors, ${ordinal} % ${VISITOR_CHUNK_BITS}) = 1`;
  const m = visitorDayMixed;
  const o = visitorOrdinals;
  const result = await db.execute<{ bucket: number; visitors: Numeric }>(sql`
    with matched as materialized (
      select width_bucket(day, ${edges}) as bucket, day, chunk, bit_and(visitors) as visitors
      from (select filter, day, chunk, bit_or(visitors) as visitors from (${sql.join(kept, sql` union all `)}) as kept group by filter, day, chunk) as per_filter
      group by day, chunk having count(*) = ${filters.length}
    ),
    counted as (
      select case when grouping(bucket) = 1 then 0 else bucket end as bucket, bit_count(bit_or(visitors)) as visitors
      from matched group by grouping sets ((bucket, chunk), (chunk))
    ),
    suspects as (
      select distinct ${m.ordinal} as ordinal from ${m}
      join matched x on x.day = ${m.day} and x.chunk = ${chunkOf(m.ordinal)} and ${counts(m.ordinal)}
      where ${m.projectId} = ${scope.projectId} and ${m.day} >= ${window.start} and ${m.day} < ${window.end}
        and ${m.dimension} in (${sql.join(
          filters.map(({ dimension }) => sql`${dimension}`),
          sql`, `,
        )})
    ),
    suspects_counted as (
      select distinct s.ordinal, x.bucket from suspects s join matched x on x.chunk = ${chunkOf(sql`s.ordinal`)} and ${counts(sql`s.ordinal`)}
    ),
    suspects_matching as (
      select distinct s.ordinal, width_bucket(${sessions.startedAt}, ${edges}) as bucket
      from suspects s
      join ${o} on ${o.projectId} = ${scope.projectId} and ${o.ordinal} = s.ordinal
      join ${sessions} on ${sessions.projectId} = ${scope.projectId} and ${sessions.profileId} = ${o.profileId}
      where ${sessionConditions(scope.filters, { window })}
        and ${sessions.startedAt} >= ${window.start} and ${sessions.startedAt} < ${window.end}
    ),
    overcounted as (
      select bucket, -count(*) as visitors from (select * from suspects_counted except select * from suspects_matching) as wrong group by bucket
      union all
      select 0, -count(*) from (select ordinal from suspects_counted except select ordinal from suspects_matching) as wrong
    )
    select bucket, sum(visitors) as visitors from (select * from counted union all select * from overcounted) as parts group by bucket`);
  return new Map(result.rows.map((row) => [Number(row.bucket), toNumber(row.visitors)]));
}
