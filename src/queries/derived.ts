import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";

/**
 * Runs one refresh routine in its own transaction with no statement timeout: a bulk run may take
 * minutes, and a session setting left on a pooled server connection by an API client must not
 * cancel it. The routine's one value is returned, or undefined when it is NULL (it ran nothing).
 */
async function runRefresh(
  db: Database,
  call: SQL,
  isolationLevel: "read committed" | "repeatable read" = "read committed",
): Promise<number | boolean | undefined> {
  return db.transaction(
    async (tx) => {
      await tx.execute(sql`set local statement_timeout = 0`);
      const result = await tx.execute<{ outcome: number | boolean | null }>(sql`select ${call} as outcome`);
      const outcome = result.rows[0]?.outcome;
      return outcome === null || outcome === undefined ? undefined : outcome;
    },
    { isolationLevel },
  );
}

/**
 * Folds events committed since the last run into the derived tables (src/db/routines/
 * refresh_derived.sql). Safe to call at any time and concurrently: a call made during another run
 * waits for it, then folds what is left. Returns the number of sessions recomputed.
 */
export async function refreshDerived(db: Database): Promise<number> {
  return Number((await runRefresh(db, sql`refresh_derived()`)) ?? 0);
}

/** What the cron trigger's refresh did: the sessions recomputed, the events folded, the strings' sessions. */
export interface FamiliesRefresh {
  /** Undefined when another run of the session family was under way, so this one skipped it. */
  sessionsRecomputed: number | undefined;
  /** False when another run of the event family was under way, so this one skipped it. */
  eventsFolded: boolean;
  /** The sessions taken into the strings; undefined when another run of them was under way. */
  sessionsInStrings: number | undefined;
}

/**
 * The cron trigger's refresh: the two families of refresh_derived() at once, each in its own
 * transaction on its own connection (src/db/routines/refresh_session_family.sql,
 * refresh_event_family.sql), since neither reads what the other writes, and the session strings
 * (refresh_session_strings.sql) on the event family's connection once it is done: they take in the
 * sessions committed by then, so the second core shares the session family's work, and the
 * strings follow the sessions by up to a run. Each is skipped at once when a run of it is under
 * way, so that runs longer than the trigger's minute do not queue a waiting connection per minute;
 * the next trigger folds what this one skipped.
 */
export async function refreshFamiliesUnlessRunning(db: Database): Promise<FamiliesRefresh> {
  // All settle before any failure is thrown, so that no transaction is cut off by the pool closing
  // after the trigger.
  const eventsThenStrings = async () => {
    const events = await runRefresh(db, sql`refresh_event_family(false)`);
    // One snapshot for the whole run, beside a session family that may commit during it
    // (src/db/routines/refresh_session_strings.sql).
    const strings = await runRefresh(db, sql`refresh_session_strings(false)`, "repeatable read");
    return { events, strings };
  };
  const [sessionsRun, secondRun] = await Promise.allSettled([
    runRefresh(db, sql`refresh_session_family(false)`),
    eventsThenStrings(),
  ]);
  if (sessionsRun.status === "rejected") throw sessionsRun.reason;
  if (secondRun.status === "rejected") throw secondRun.reason;
  const sessions = sessionsRun.value;
  const { events, strings } = secondRun.value;
  return {
    sessionsRecomputed: sessions === undefined ? undefined : Number(sessions),
    eventsFolded: events === true,
    sessionsInStrings: strings === undefined ? undefined : Number(strings),
  };
}
