import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessionDayBits } from "../../db/schema";
import { dimensionValueCondition } from "../filter-conditions";
import type { DimensionFilter, SessionScope, TimeWindow } from "./model";
import { projectDaysBuilt, wholeProjectDays } from "./window-rows";

/**
 * The matching sessions of each day under two or three filters, from the session strings per
 * project day (src/db/routines/refresh_session_bits.sql): the day's mask. session-bits.ts sums
 * them, combined-visitors.ts checks visitors against them.
 */

/** Whether the window is whole project days that no bucket edge cuts, with their strings built. */
export async function bitStringsCover(
  db: Database,
  scope: SessionScope,
  buckets: readonly number[],
): Promise<boolean> {
  const whole = wholeProjectDays(scope, buckets);
  if (whole.start !== scope.window.start || whole.end !== scope.window.end) return false;
  return projectDaysBuilt(db, scope);
}

/** The masks of the window's days: `day`, `mask`; a day where some filter keeps nothing has none. */
export function dayMasks(scope: SessionScope, filters: readonly DimensionFilter[], window: TimeWindow): SQL {
  const b = sessionDayBits;
  const kept = filters.map(
    ({ dimension, filter }, index) => sql`
      select ${index} as filter, ${b.day} as day, ${b.sessions} as sessions from ${b}
      where ${b.projectId} = ${scope.projectId} and ${b.dimension} = ${dimension}
        and ${b.day} >= ${new Date(window.start)} and ${b.day} < ${new Date(window.end)}
        and ${dimensionValueCondition(filter, b.name)}`,
  );
  return sql`
    select day, bit_and(sessions) as mask
    from (select filter, day, bit_or(sessions) as sessions from (${sql.join(kept, sql` union all `)}) as kept group by filter, day) as per_filter
    group by day having count(*) = ${filters.length}`;
}
