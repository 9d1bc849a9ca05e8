import { sql } from "drizzle-orm";
import type { Database } from "../db/client";

/**
 * Folds events committed since the last run into the derived tables (src/db/routines/
 * refresh_derived.sql). Safe to call at any time and concurrently.
 * Returns the number of sessions recomputed.
 */
export async function refreshDerived(db: Database): Promise<number> {
  const result = await db.execute<{ touched: number }>(sql`select refresh_derived() as touched`);
  return Number(result.rows[0]?.touched ?? 0);
}
