import pg from "pg";
import { buildEventIndexes, buildEventRollups, deriveSessions, type IndexDefinition } from "./loader-indexes";

/**
 * The derive steps of a load (loader.ts): the first slice's whole build, the later slices' folding,
 * and the wait for every loaded event to be derived.
 */

async function analyze(connectionString: string, tables: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`ANALYZE ${tables}`);
  } finally {
    await client.end();
  }
}

/** How long a seed waits for its events to be derived past a transaction open elsewhere. */
const DERIVE_WAIT_MS = 120_000;

/**
 * refresh_derived() derives the events below its snapshot's xmin, which is the whole cluster's: a
 * transaction left open in another database (a test's, a migration's) holds it back, and the
 * loaded events would wait for the next refresh (a fresh demo database then lists no event name).
 * Refreshes again, a second apart, until every watermark is past the loaded events.
 */
export async function deriveUntilCovered(client: pg.Client): Promise<void> {
  const newest = await client.query<{ xid: string | null }>(
    "SELECT max(ingest_xid)::text AS xid FROM events",
  );
  const loaded = newest.rows[0]?.xid;
  if (loaded === undefined || loaded === null) return;
  const behind = async () => {
    const state = await client.query<{ behind: boolean }>(
      "SELECT coalesce(min(processed_xid), 0) <= $1::bigint AS behind FROM derived_state",
      [loaded],
    );
    return state.rows[0]?.behind === true;
  };
  const until = performance.now() + DERIVE_WAIT_MS;
  while (await behind()) {
    if (performance.now() > until)
      throw new Error(
        "the loaded events are not derived yet: a transaction stays open; run SELECT refresh_derived() later",
      );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await client.query("SELECT refresh_derived()");
  }
}

/**
 * Derives the events of a slice after the first: the session and the event family at once on two
 * connections, as the cron trigger does (neither reads what the other writes), each in its own
 * transaction and with room to sort, then the session strings from the sessions just committed. The
 * first slice's derive (below) builds the tables whole.
 */
export async function deriveFamiliesAtOnce(connectionString: string): Promise<void> {
  const family = async (routine: string) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query("SET synchronous_commit = off");
      await client.query("SET work_mem = '256MB'");
      await client.query(`SELECT ${routine}(true)`);
    } finally {
      await client.end().catch(() => {});
    }
  };
  const runs = await Promise.allSettled([family("refresh_session_family"), family("refresh_event_family")]);
  for (const run of runs) if (run.status === "rejected") throw run.reason;
  // The strings take in the sessions the family has just committed.
  await family("refresh_session_strings");
}

/**
 * Derives the first slice's events (all of them without slices): refresh_derived() builds every
 * derived table whole. With the events indexes dropped for the load, the sessions derive on this
 * connection while a second builds those indexes, analyzes events and profiles, then builds the
 * event rollups; both run to their end either way. Returns the refresh's and the index builds' times.
 */
export async function deriveFirstSlice(
  client: pg.Client,
  connectionString: string,
  embedded: boolean,
  deferred: IndexDefinition[],
): Promise<{ refreshMillis: number; lateIndexMillis: number }> {
  const began = performance.now();
  // The routine sorts every loaded event once: give the sort room (unless it sets its own).
  await client.query(`SET work_mem = '${embedded ? "64MB" : "256MB"}'`);
  if (embedded) {
    await client.query("SELECT refresh_derived()");
    return { refreshMillis: performance.now() - began, lateIndexMillis: 0 };
  }
  if (deferred.length === 0) {
    // Statistics for the fresh rows, gathered on a second connection while the sessions derive.
    await Promise.all([
      client.query("SELECT refresh_derived()"),
      analyze(connectionString, "events, profiles"),
    ]);
    await client.query("ANALYZE sessions");
    return { refreshMillis: performance.now() - began, lateIndexMillis: 0 };
  }
  let refreshMillis = 0;
  let lateIndexMillis = 0;
  const [derived, indexed] = await Promise.allSettled([
    deriveSessions(client).finally(() => {
      refreshMillis = performance.now() - began;
    }),
    buildEventIndexes(connectionString, deferred)
      .finally(() => {
        lateIndexMillis = performance.now() - began;
      })
      .then(() => buildEventRollups(connectionString)),
  ]);
  if (derived.status === "rejected") {
    const reason = derived.reason instanceof Error ? derived.reason.message : String(derived.reason);
    const also = indexed.status === "rejected" ? ` (and: ${String(indexed.reason)})` : "";
    throw new Error(
      `the events were loaded, but deriving the sessions failed (${reason})${also}; ` +
        "run SELECT refresh_derived() to derive them",
      { cause: derived.reason },
    );
  }
  if (indexed.status === "rejected") throw indexed.reason;
  await client.query("ANALYZE sessions");
  return { refreshMillis, lateIndexMillis };
}
