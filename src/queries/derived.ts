import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";

/**
 * Runs one refresh routine in its own transaction with no statement timeout: a bulk run may take
 * minutes, and a session setting left on a pooled server connection by an API client must not
 * cancel it. The routine returns the sessions it recomputed, or NULL when it ran nothing.
 */
async function runRefresh(db: Database, call: SQL): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local statement_timeout = 0`);
    const result = await tx.execute<{ touched: number | null }>(sql`select ${call} as touched`);
    const touched = result.rows[0]?.touched;
    return touched === null || touched === undefined ? undefined : Number(touched);
  });
}

/**
 * Folds events committed since the last run into the derived tables (src/db/routines/
 * refresh_derived.sql). Safe to call at any time and concurrently: a call made during another run
 * waits for it, then folds what is left. Returns the number of sessions recomputed.
 */
export async function refreshDerived(db: Database): Promise<number> {
  return (await runRefresh(db, sql`refresh_derived()`)) ?? 0;
}

/**
 * The cron trigger's refresh: as refreshDerived, but undefined at once when another run is under
 * way (src/db/routines/refresh_derived_unless_running.sql), so that runs longer than the trigger's
 * minute do not queue a waiting connection per minute; the next trigger folds what this one skipped.
 */
export async function refreshDerivedUnlessRunning(db: Database): Promise<number | undefined> {
  return runRefresh(db, sql`refresh_derived_unless_running()`);
}
