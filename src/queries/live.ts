import { and, countDistinct, eq, gt, lte } from "drizzle-orm";
import type { Database } from "../db/client";
import { events } from "../db/schema";

/** Distinct visitors with any event in the `minutes` before `now` (contract section 5). */
export async function liveVisitors(
  db: Database,
  projectId: string,
  minutes: number,
  now: Date,
): Promise<number> {
  const since = new Date(now.getTime() - minutes * 60_000);
  const [row] = await db
    .select({ visitors: countDistinct(events.profileId) })
    .from(events)
    .where(and(eq(events.projectId, projectId), gt(events.createdAt, since), lte(events.createdAt, now)));
  return Number(row?.visitors ?? 0);
}
