import { sql } from "drizzle-orm";
import type { Database } from "../db/client";

/**
 * Folds events committed since the last run into the derived tables (src/db/routines/
 * refresh_derived.sql). Safe to call at any time and concurrently.
 * Returns the number of sessions recomputed.
 */
export async function refreshDerived(db: Database): Promise<number> {
  // Its own transaction with no statement timeout: a bulk run may take minutes, and a session
  // setting left on a pooled server connection by an API client must not cancel it.
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local statement_timeout = 0`);
    const result = await tx.execute<{ touched: number }>(sql`select refresh_derived() as touched`);
    return Number(result.rows[0]?.touched ?? 0);
  });
}
