import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";
import { eventConditions } from "../filter-conditions";
import type { TimeWindow } from "../insights/model";
import { toNumber } from "../sql-helpers";

export const FUNNEL_GROUPS = ["session_id", "profile_id"] as const;
export type FunnelGroup = (typeof FUNNEL_GROUPS)[number];

export interface FunnelScope {
  projectId: string;
  window: TimeWindow;
  filters: Filter[];
  /** 2–10 event names, duplicates allowed. */
  steps: string[];
  windowHours: number;
  groupBy: FunnelGroup;
}

/**
 * How many groups (sessions or profiles) reach each level of the funnel (contract A5; ClickHouse's
 * `windowFunnel` with `strict_increase`): element k-1 is users_k, the groups with level >= k.
 *
 * One pass per step over the window's step events in (group, time) order, all in Postgres. For each
 * event named step k, `s<k>` is the latest first-step time of a chain e1 < … < ek (strictly
 * increasing times, so equal timestamps never chain) that ends at this event and spans at most
 * `windowHours`: the latest s<k-1> of the group's strictly earlier events, kept only when this
 * event lies within `windowHours` of it. "Strictly earlier" is the frame up to 1 ms before the
 * event: `created_at` holds milliseconds, and a frame with a fixed start is aggregated
 * incrementally (EXCLUDE GROUP, the other way to leave out equal times, recomputes the frame for
 * every row: quadratic in a profile's events, over the statement timeout at 10M). The latest start
 * is the best to extend, since it leaves the most room. A group's level is the largest k with some
 * s<k>.
 */
export async function funnelLevels(db: Database, scope: FunnelScope): Promise<number[]> {
  const group = scope.groupBy === "session_id" ? events.sessionId : events.profileId;
  const span = sql`make_interval(hours => ${scope.windowHours})`;
  const stepEvents = sql`select ${group} collate "C" as grp, ${events.createdAt} as t, ${events.name} as name
    from ${events}
    where ${and(
      eq(events.projectId, scope.projectId),
      gte(events.createdAt, new Date(scope.window.start)),
      lt(events.createdAt, new Date(scope.window.end)),
      sql`${events.name} = any(${sql.param([...new Set(scope.steps)])}::text[])`,
      eventConditions(scope.filters),
    )}`;
  let layer: SQL = sql`select grp, t, name, case when name = ${scope.steps[0]} then t end as s1 from (${stepEvents}) as step_events`;
  const carried = ["s1"];
  for (let k = 2; k <= scope.steps.length; k++) {
    const previous = sql.raw(`s${k - 1}`);
    const best = sql`max(${previous}) over earlier`;
    layer = sql`select grp, t, name, ${sql.raw(carried.join(", "))},
        case when name = ${scope.steps[k - 1]} and t <= ${best} + ${span} then ${best} end as ${sql.raw(`s${k}`)}
      from (${layer}) as ${sql.raw(`level${k - 1}`)}
      window earlier as (partition by grp order by t range between unbounded preceding and interval '1 millisecond' preceding)`;
    carried.push(`s${k}`);
  }
  const levelOfRow = sql.join(
    carried.map(
      (column, index) => sql`case when ${sql.raw(column)} is not null then ${index + 1} else 0 end`,
    ),
    sql`, `,
  );
  const counts = scope.steps.map((_, index) => sql`count(*) filter (where level >= ${index + 1})`);
  const result = await db.execute<Record<string, string | number>>(sql`
    select ${sql.join(
      counts.map((count, index) => sql`${count} as ${sql.raw(`users_${index + 1}`)}`),
      sql`, `,
    )}
    from (select grp, max(greatest(${levelOfRow})) as level from (${layer}) as levels group by grp) as groups`);
  const row = result.rows[0] ?? {};
  return scope.steps.map((_, index) => toNumber(row[`users_${index + 1}`]));
}
