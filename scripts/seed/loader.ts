import { once } from "node:events";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { DEMO_EVENT_META } from "./catalogue-site";
import { DAY, HOUR } from "./copy-text";
import { DEMO_PROJECTS, ensureDemoFixtures } from "./demo-fixtures";
import { DemoDataGenerator, EVENT_COLUMNS, PROFILE_COLUMNS } from "./generator";
import { deriveFamiliesAtOnce, deriveFirstSlice, deriveUntilCovered } from "./loader-derive";
import { dropIndexes, INDEX_BUILD_MEMORY, type IndexDefinition, NOTHING_DROPPED } from "./loader-indexes";

/**
 * Loads the demo data (generator.ts) into Postgres: the demo fixtures, then the events and
 * profiles by COPY in one transaction (or one per slice of hours), then the sessions with
 * refresh_derived() (after each slice).
 */

export interface SeedOptions {
  events: number;
  days: number;
  seed: number;
  reset: boolean;
  now?: Date;
  projects?: string[];
  onProgress?: (loaded: number, total: number) => void;
  /**
   * Load the events in this many spans of hours, each committed and derived before the next
   * (default 1: all at once); see seedDatabase.
   */
  slices?: number;
  /** Called when a slow step after a load starts (for progress messages); `slice` when in slices. */
  onPhase?: (phase: "indexes" | "sessions", slice?: { slice: number; of: number }) => void;
}

export interface SeedResult {
  events: number;
  sessions: number;
  profiles: number;
  millis: number;
  /** Generating and loading the rows (COPY, index rebuild, commit). */
  loadMillis?: number;
  /**
   * The part of `loadMillis` spent rebuilding the events indexes (0 when they were kept): the
   * primary key; the others are built after the load (`lateIndexMillis`).
   */
  indexMillis?: number;
  /**
   * Wall time after the load: refresh_derived() (with ANALYZE of the loaded tables alongside, and
   * the events indexes not built during the load).
   */
  deriveMillis?: number;
  /** The part of `deriveMillis` spent in refresh_derived() itself (with the sessions indexes). */
  refreshMillis?: number;
  /** Events indexes built after the load, alongside refresh_derived() (0 when there were none). */
  lateIndexMillis?: number;
}

/** The projects that receive events by default, and their share of them. */
export const DEFAULT_PROJECT_SHARES: ReadonlyArray<readonly [string, number]> = [
  ["demo", 0.8],
  ["demo-2", 0.1],
  ["other", 0.1],
];

function isEmbedded(version: string): boolean {
  return /pglite|wasm32|emscripten/i.test(version);
}

/**
 * Streams COPY text chunks into `COPY … FROM STDIN`, respecting backpressure. With `maxBytes`, the
 * rows are split over several COPY statements of about that size (the embedded database buffers a
 * whole COPY in memory before running it).
 */
export async function copyChunks(
  client: pg.ClientBase,
  statement: string,
  chunks: Iterable<Buffer>,
  onChunk: () => void,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<void> {
  const iterator = chunks[Symbol.iterator]();
  let next = iterator.next();
  while (!next.done) {
    const stream = client.query(copyFrom(statement));
    let failed: Error | undefined;
    const done = new Promise<void>((resolve, reject) => {
      stream.on("finish", resolve);
      stream.on("error", (error: Error) => {
        failed = error;
        reject(error);
      });
    });
    let written = 0;
    while (!next.done && written < maxBytes && failed === undefined) {
      written += next.value.length;
      if (!stream.write(next.value)) await Promise.race([once(stream, "drain"), done]);
      onChunk();
      next = iterator.next();
    }
    stream.end();
    await done;
  }
}

/** Distinct project ids in a table whose primary or leading index column is project_id. */
async function distinctProjects(client: pg.ClientBase, table: string): Promise<string[]> {
  const result = await client.query<{ project_id: string }>(
    `WITH RECURSIVE p AS (
       (SELECT project_id FROM ${table} ORDER BY project_id LIMIT 1)
       UNION ALL
       SELECT (SELECT project_id FROM ${table} WHERE project_id > p.project_id ORDER BY project_id LIMIT 1)
       FROM p WHERE p.project_id IS NOT NULL
     )
     SELECT project_id FROM p WHERE project_id IS NOT NULL`,
  );
  return result.rows.map((row) => row.project_id);
}

function projectShares(projects: readonly string[] | undefined): Array<readonly [string, number]> {
  if (projects === undefined) return [...DEFAULT_PROJECT_SHARES];
  const unique = [...new Set(projects)];
  if (unique.length === 0) throw new Error("projects must not be empty");
  if (unique.length === 1) return [[unique[0] ?? "demo", 1]];
  // The first project gets most of the traffic; the others share the rest as noise.
  return unique.map((p, i) => [p, i === 0 ? 0.8 : 0.2 / (unique.length - 1)] as const);
}

/** The embedded database holds a whole COPY in memory: keep each one to about this size. */
const EMBEDDED_COPY_BYTES = 16 << 20;

/** Below this many events, dropping and rebuilding the events indexes is not worth it. */
const REBUILD_INDEXES_FROM = 100_000;

/**
 * The instants that end each slice of a load but the last: `slices` about equal spans of the
 * generated range, each ending on a whole UTC hour as the generator's hours do, so a slice holds
 * the sessions that start before its end.
 */
export function sliceEnds(now: Date, days: number, slices: number): number[] {
  const end = now.getTime();
  const start = end - Math.round(days * DAY);
  return Array.from(
    { length: slices - 1 },
    (_, i) => Math.floor((start + ((i + 1) * (end - start)) / slices) / HOUR) * HOUR,
  );
}

/** What the first slice's transaction found and did, for the ones after it and the derive. */
interface FirstSlice {
  /** The events table was empty and truncated in the transaction (COPY FREEZE, indexes rebuilt). */
  fresh: boolean;
  /** Events indexes dropped for the load, to build after it commits alongside refresh_derived(). */
  deferred: IndexDefinition[];
  indexMillis: number;
}

/**
 * The first slice's preparation inside its transaction: the fixtures, the projects, and with
 * `reset` the seeded projects' rows removed. Returns whether the events table is empty and was
 * truncated in this transaction (so COPY may FREEZE and the indexes be rebuilt once).
 */
async function prepareLoad(
  client: pg.ClientBase,
  options: SeedOptions,
  projectIds: string[],
): Promise<boolean> {
  // Fixtures commit together with the rows: a demo project that exists has its data.
  await ensureDemoFixtures(client);
  for (const id of projectIds) {
    if (DEMO_PROJECTS.some((p) => p.id === id)) continue;
    await client.query(
      "INSERT INTO projects (id, organization_id, name) VALUES ($1, 'demo-org', $1) ON CONFLICT (id) DO NOTHING",
      [id],
    );
  }
  if (options.reset) {
    const present = new Set([
      ...(await distinctProjects(client, "events")),
      ...(await distinctProjects(client, "sessions")),
      ...(await distinctProjects(client, "profiles")),
      ...(await distinctProjects(client, "event_meta")),
    ]);
    if ([...present].every((p) => projectIds.includes(p))) {
      await client.query("TRUNCATE events, sessions, profiles, event_meta");
      await client.query("DELETE FROM derived_state");
      return true;
    }
    for (const table of ["events", "sessions", "profiles", "event_meta"]) {
      await client.query(`DELETE FROM ${table} WHERE project_id = ANY($1)`, [projectIds]);
    }
    return false;
  }
  if ((await client.query("SELECT 1 FROM events LIMIT 1")).rowCount === 0) {
    await client.query("TRUNCATE events");
    return true;
  }
  return false;
}

/** The last slice's rows besides events: the profiles of the visitors seen, and the event metadata. */
async function loadProfilesAndMeta(
  client: pg.ClientBase,
  rows: DemoDataGenerator,
  options: SeedOptions,
  projectIds: string[],
  copyBatchBytes: number,
): Promise<void> {
  // Profiles: plain rows after a reset; merged into existing ones otherwise.
  const profileTarget = options.reset ? "profiles" : "seed_profiles";
  if (!options.reset) {
    await client.query("CREATE TEMP TABLE seed_profiles (LIKE profiles) ON COMMIT DROP");
  }
  const copyProfiles = `COPY ${profileTarget} (${PROFILE_COLUMNS.join(", ")}) FROM STDIN`;
  await copyChunks(client, copyProfiles, rows.profileChunks(), () => {}, copyBatchBytes);
  if (!options.reset) {
    await client.query(
      `INSERT INTO profiles (${PROFILE_COLUMNS.join(", ")})
       SELECT ${PROFILE_COLUMNS.join(", ")} FROM seed_profiles
       ON CONFLICT (project_id, id) DO UPDATE SET
         created_at = least(profiles.created_at, excluded.created_at),
         last_seen_at = greatest(profiles.last_seen_at, excluded.last_seen_at)`,
    );
  }
  for (const project of projectIds) {
    for (const meta of DEMO_EVENT_META) {
      await client.query(
        `INSERT INTO event_meta (project_id, name, description, conversion, color, icon)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (project_id, name) DO UPDATE SET description = excluded.description,
           conversion = excluded.conversion, color = excluded.color, icon = excluded.icon`,
        [project, meta.name, meta.description, meta.conversion, meta.color, meta.icon],
      );
    }
  }
}

/**
 * Creates the demo fixtures and loads `events` generated events (plus their profiles and event
 * metadata) into the database, then derives the sessions with `refresh_derived()`. The schema
 * must be migrated.
 *
 * With `reset`, the seeded projects' events, sessions, profiles and event metadata are removed
 * first (when the database holds no other projects, by TRUNCATE, which also resets the
 * derived-table watermark). Loading into an empty events table uses COPY FREEZE and rebuilds the
 * primary key before committing; the other events indexes are then built on a second connection
 * while refresh_derived() runs (a failure there names the missing indexes). Otherwise rows are
 * appended with the indexes in place.
 *
 * With `slices` above 1 the events are loaded in that many spans of hours, each in its own
 * transaction and derived before the next is loaded: the first as above, the later ones appended
 * with the indexes in place and folded in by the incremental refresh. A first build keeps every
 * temporary table it writes until it commits; slices bound that peak on disk to a slice's, at
 * the cost of the incremental path's time. The rows are the same (a session's events are written
 * with the hour it starts in, so none spans two slices); the profiles come with the last slice.
 */
export async function seedDatabase(connectionString: string, options: SeedOptions): Promise<SeedResult> {
  const began = performance.now();
  const now = options.now ?? new Date();
  const slices = options.slices ?? 1;
  if (!Number.isSafeInteger(slices) || slices < 1) throw new Error("slices must be a positive integer");
  const shares = projectShares(options.projects);
  const projectIds = shares.map(([p]) => p);
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const version = (await client.query<{ version: string }>("SELECT version()")).rows[0]?.version ?? "";
    const embedded = isEmbedded(version);
    const copyBatchBytes = embedded ? EMBEDDED_COPY_BYTES : Number.POSITIVE_INFINITY;
    await client.query("SET client_min_messages = warning");
    // A seed can be rerun: don't wait for each commit's WAL flush (this session only).
    if (!embedded) await client.query("SET synchronous_commit = off");

    let generator: DemoDataGenerator | undefined;
    let first: FirstSlice | undefined;
    let loadMillis = 0;
    let lateIndexMillis = 0;
    let refreshMillis = 0;
    const ends = [...sliceEnds(now, options.days, slices), Number.POSITIVE_INFINITY];
    for (const [slice, until] of ends.entries()) {
      const last = slice === ends.length - 1;
      const sliceBegan = performance.now();
      await client.query("BEGIN");
      try {
        const fresh = first?.fresh ?? (await prepareLoad(client, options, projectIds));
        const xid =
          (await client.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]?.xid ??
          "0";
        generator ??= new DemoDataGenerator({
          events: options.events,
          days: options.days,
          seed: options.seed,
          now,
          projects: shares,
          ingestXid: xid,
        });
        const rows = generator;
        rows.setIngestXid(xid);
        const progress = (): void => options.onProgress?.(rows.events, options.events);

        // Only the first slice can load into an empty table: it rebuilds the indexes once.
        const rebuild = first === undefined && fresh && !embedded && options.events >= REBUILD_INDEXES_FROM;
        const dropped = rebuild ? await dropIndexes(client, "events", true) : NOTHING_DROPPED;
        const freeze = first === undefined && fresh ? " WITH (FREEZE)" : "";
        const copyEvents = `COPY events (${EVENT_COLUMNS.join(", ")}) FROM STDIN${freeze}`;
        await copyChunks(client, copyEvents, rows.eventChunks(until), progress, copyBatchBytes);
        // The primary key commits with the rows (it guards against loading them twice); the other
        // indexes are built after the commit, while the sessions derive.
        let indexMillis = 0;
        if (dropped.primary !== undefined) {
          options.onPhase?.("indexes");
          const indexStart = performance.now();
          await client.query(`SET LOCAL maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
          await client.query(dropped.primary.definition);
          indexMillis = performance.now() - indexStart;
        }
        if (last) await loadProfilesAndMeta(client, rows, options, projectIds, copyBatchBytes);
        await client.query("COMMIT");
        first ??= { fresh, deferred: dropped.secondary, indexMillis };
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        if (error instanceof Error && "code" in error && error.code === "23505") {
          throw new Error(
            `${error.message}: rows from this seed and 'now' are already loaded; rerun with --reset or another seed`,
          );
        }
        throw error;
      }
      loadMillis += performance.now() - sliceBegan;
      if (last) options.onProgress?.(generator.events, options.events);
      options.onPhase?.("sessions", slices > 1 ? { slice: slice + 1, of: slices } : undefined);
      const deriveBegan = performance.now();
      if (slice === 0) {
        const timed = await deriveFirstSlice(client, connectionString, embedded, first.deferred);
        lateIndexMillis = timed.lateIndexMillis;
        refreshMillis += timed.refreshMillis;
      } else {
        // The tables have grown by a slice since their statistics: the routines plan by them.
        await client.query("ANALYZE events, sessions");
        await deriveFamiliesAtOnce(connectionString);
        refreshMillis += performance.now() - deriveBegan;
      }
    }
    if (generator === undefined || first === undefined) throw new Error("nothing was loaded");
    await deriveUntilCovered(client);
    // Bulk-loaded session pages, names and properties are not all-visible yet: until autovacuum gets
    // to them, the index-only scans of path, name and property filters would read the tables too.
    // VACUUM marks them (a second at a million events).
    await client.query("VACUUM session_pages, session_names, session_properties");
    await client.query("RESET work_mem");

    return {
      events: generator.events,
      sessions: generator.sessions,
      profiles: generator.profiles,
      millis: Math.round(performance.now() - began),
      loadMillis: Math.round(loadMillis),
      indexMillis: Math.round(first.indexMillis),
      deriveMillis: Math.round(performance.now() - began - loadMillis),
      refreshMillis: Math.round(refreshMillis),
      lateIndexMillis: Math.round(lateIndexMillis),
    };
  } finally {
    await client.end();
  }
}
