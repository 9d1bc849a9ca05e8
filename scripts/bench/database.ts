import { execFile, execFileSync } from "node:child_process";
import os from "node:os";
import { promisify } from "node:util";
import pg from "pg";
import { migrateDatabase } from "../db/apply-migrations";
import { seedDatabase } from "../seed/loader";
import { gib, guardDisk } from "./disk-guard";

/**
 * The benchmark's own database: created when missing, migrated, and loaded with the seed unless
 * a marker says this exact data set is already there. The marker is a COMMENT ON DATABASE, so
 * the schema under test holds no benchmark-only table, and it is written only after the load
 * committed (an interrupted load leaves no marker and is redone with a reset).
 */

const MARKER_PREFIX = "edge-analytics bench data set ";

export interface DataSetMarker {
  events: number;
  days: number;
  seed: number;
  /** The seed's `now`: the end of the generated traffic. */
  now: string;
  loadedAt: string;
  loadSeconds: number;
  sessions: number;
  profiles: number;
  /** Slices of hours the load took, each committed and derived before the next (absent: one). */
  slices?: number;
  /**
   * The load's peak on disk: free space at its start less the least seen during it (the
   * disk guard's samples; absent when the server's disk is not on this machine).
   */
  peakDiskBytes?: number;
}

export interface PreparedDatabase {
  marker: DataSetMarker;
  reused: boolean;
  /** Seconds `settleDatabase` took before anything was measured. */
  settleSeconds: number;
}

type Log = (line: string) => void;

function parseMarker(comment: string | null | undefined): DataSetMarker | undefined {
  if (!comment?.startsWith(MARKER_PREFIX)) return undefined;
  try {
    const value = JSON.parse(comment.slice(MARKER_PREFIX.length)) as Partial<DataSetMarker>;
    if (
      typeof value.events !== "number" ||
      typeof value.days !== "number" ||
      typeof value.seed !== "number"
    ) {
      return undefined;
    }
    if (typeof value.now !== "string") return undefined;
    return value as DataSetMarker;
  } catch {
    return undefined;
  }
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function prepareBenchDatabase(
  adminUrl: string,
  database: string,
  url: string,
  wanted: {
    events: number;
    days: number;
    seed: number;
    reload: boolean;
    minFreeBytes: number;
    slices: number;
  },
  log: Log,
): Promise<PreparedDatabase> {
  const existing = await withClient(adminUrl, async (admin) => {
    const found = await admin.query<{ comment: string | null }>(
      "SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
      [database],
    );
    if (found.rowCount === 0) {
      log(`database: creating ${database}`);
      // The name is validated as a plain identifier by the option parser.
      await admin.query(`CREATE DATABASE "${database}"`);
      return undefined;
    }
    return parseMarker(found.rows[0]?.comment);
  });

  await migrateDatabase(url);
  const same =
    existing !== undefined &&
    existing.events === wanted.events &&
    existing.days === wanted.days &&
    existing.seed === wanted.seed;
  if (same && !wanted.reload) {
    log(`database: ${database} already holds this data set (loaded ${existing.loadedAt}); not reloading`);
    // A migration may have added derived tables: the first refresh after it builds them.
    await withClient(url, async (client) => {
      // A live tail left by an interrupted run is not part of the data set (and must not be derived).
      await removeLiveTail(client, existing);
      await client.query("SELECT refresh_derived()");
    });
    return { marker: existing, reused: true, settleSeconds: await settleDatabase(url, log) };
  }

  const now = new Date();
  log(
    `database: loading ${wanted.events.toLocaleString("en-US")} events over ${wanted.days} days ` +
      `(seed ${wanted.seed}) into ${database}${wanted.slices > 1 ? ` in ${wanted.slices} slices` : ""}…`,
  );
  let lastTenth = -1;
  const guard = await guardDisk(adminUrl, database, wanted.minFreeBytes, log);
  const loading = seedDatabase(url, {
    events: wanted.events,
    days: wanted.days,
    seed: wanted.seed,
    now,
    reset: true,
    slices: wanted.slices,
    onProgress: (loaded, total) => {
      const tenth = Math.floor((total > 0 ? loaded / total : 1) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        log(`  loading events: ${tenth * 10} %`);
      }
    },
    onPhase: (phase, slice) =>
      log(
        phase === "indexes"
          ? "  rebuilding the events indexes…"
          : `  deriving sessions (refresh_derived)${slice ? ` of slice ${slice.slice} of ${slice.of}` : ""}…`,
      ),
  });
  const result = await loading.catch((error: unknown) => {
    const stopped = guard?.stop().stoppedBecause;
    throw stopped === undefined ? error : new Error(`database: ${stopped}`, { cause: error });
  });
  const watch = guard?.stop();
  const marker: DataSetMarker = {
    events: wanted.events,
    days: wanted.days,
    seed: wanted.seed,
    now: now.toISOString(),
    loadedAt: new Date().toISOString(),
    loadSeconds: Math.round(result.millis / 100) / 10,
    sessions: result.sessions,
    profiles: result.profiles,
    ...(wanted.slices > 1 && { slices: wanted.slices }),
    ...(watch && { peakDiskBytes: watch.startFreeBytes - watch.leastFreeBytes }),
  };
  await withClient(adminUrl, async (admin) => {
    const text = admin.escapeLiteral(`${MARKER_PREFIX}${JSON.stringify(marker)}`);
    await admin.query(`COMMENT ON DATABASE "${database}" IS ${text}`);
  });
  const peak = marker.peakDiskBytes === undefined ? "" : `, its peak on disk ${gib(marker.peakDiskBytes)}`;
  log(`database: loaded in ${marker.loadSeconds} s${peak}`);
  return { marker, reused: false, settleSeconds: await settleDatabase(url, log) };
}

/**
 * VACUUM (ANALYZE) of the whole database, as autovacuum does within minutes of a load or a
 * migration that rewrote tables. Left to autovacuum, it ran beside the first measurements: on two
 * cores it took CPU from them, and the first reads of freshly written pages set their hint bits.
 * A served database is past that state, so the benchmark measures after it. Returns its seconds.
 */
async function settleDatabase(url: string, log: Log): Promise<number> {
  const started = performance.now();
  await withClient(url, (client) => client.query("VACUUM (ANALYZE)"));
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  log(`database: settled (VACUUM (ANALYZE)) in ${seconds} s`);
  return seconds;
}

/**
 * Traffic of the last `minutes` for `/live`: the data set ends when it was loaded, so by the time
 * a reused one is measured its last minutes are long past. The project's newest events, as many
 * as the data set holds per `minutes` on average, are copied (new ids, same visitors and
 * sessions) to end one second ago, keeping their spacing. They are never derived (no refresh
 * runs while the benchmark measures) and `removeLiveTail` deletes them afterwards: everything
 * after the data set's own end is the tail. Returns how many events were copied.
 */
export async function insertLiveTail(
  client: pg.Client,
  projectId: string,
  marker: DataSetMarker,
  projectEvents: number,
  minutes: number,
): Promise<number> {
  const count = Math.max(1, Math.round((projectEvents * minutes) / (marker.days * 24 * 60)));
  const columns = await client.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'events'
        AND column_name NOT IN ('id', 'created_at', 'ingest_xid')
      ORDER BY ordinal_position`,
  );
  const list = columns.rows.map((c) => `"${c.name}"`).join(", ");
  const inserted = await client.query(
    `WITH newest AS (
       SELECT * FROM events WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
     ), shift AS (SELECT now() - interval '1 second' - max(created_at) AS by FROM newest)
     INSERT INTO events (${list}, created_at)
     SELECT ${list}, created_at + shift.by FROM newest, shift`,
    [projectId, count],
  );
  return inserted.rowCount ?? 0;
}

/** Deletes the live tail: every event after the end of the data set. */
export async function removeLiveTail(client: pg.ClientBase, marker: DataSetMarker): Promise<void> {
  await client.query("DELETE FROM events WHERE created_at > $1", [marker.now]);
}

export interface DataFacts {
  /** Events of the measured project (`demo`). */
  projectEvents: number;
  /** Events of every project (the others are noise). */
  totalEvents: number;
  projectSessions: number;
  first: Date;
  last: Date;
}

export async function readDataFacts(url: string, projectId: string): Promise<DataFacts> {
  return withClient(url, async (client) => {
    const project = await client.query<{ n: string; first: Date | null; last: Date | null }>(
      `SELECT count(*) AS n, min(created_at) AS first, max(created_at) AS last
         FROM events WHERE project_id = $1`,
      [projectId],
    );
    const total = await client.query<{ n: string }>("SELECT count(*) AS n FROM events");
    const sessions = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM sessions WHERE project_id = $1",
      [projectId],
    );
    const row = project.rows[0];
    if (!row?.first || !row.last) throw new Error(`project ${projectId} has no events`);
    return {
      projectEvents: Number(row.n),
      totalEvents: Number(total.rows[0]?.n ?? 0),
      projectSessions: Number(sessions.rows[0]?.n ?? 0),
      first: row.first,
      last: row.last,
    };
  });
}

export interface MachineFacts {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres: string;
  /** Settings that shape the baseline's plans. */
  postgresSettings: string;
  /**
   * Seconds a Node process takes for 3·10^8 additions in a top-level loop: the same virtual
   * machine has run 2–3× slower on some days, so reports of different days are compared through it.
   */
  cpuProbeSeconds: number;
  /**
   * Seconds two such processes take side by side, three times (until the slower ends): about the
   * probe's own time when both vCPUs are there, up to twice it when the host gives the machine one.
   * Filtered answers run two statements at once, so they slow down with it; the one-process probe
   * does not show it.
   */
  cpuPairProbeSeconds?: number[];
}

/**
 * See `MachineFacts.cpuProbeSeconds`: the same one-line script as the figures the reports quote
 * (top-level code, so the sum stays a boxed number), in a child Node; the best of three.
 */
const CPU_PROBE_SCRIPT = "let s=0;for(let i=0;i<3e8;i++)s+=i;if(s<0)console.log(s)";
const secondsSince = (began: number) => Math.round((performance.now() - began) / 10) / 100;

function cpuProbe(): number {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    execFileSync(process.execPath, ["-e", CPU_PROBE_SCRIPT]);
    best = Math.min(best, secondsSince(started));
  }
  return best;
}

/** Seconds two CPU probes take side by side, until the slower ends (see `MachineFacts.cpuPairProbeSeconds`). */
export async function cpuPairSeconds(): Promise<number> {
  const run = promisify(execFile);
  const started = performance.now();
  await Promise.all([
    run(process.execPath, ["-e", CPU_PROBE_SCRIPT]),
    run(process.execPath, ["-e", CPU_PROBE_SCRIPT]),
  ]);
  return secondsSince(started);
}

/** See `MachineFacts.cpuPairProbeSeconds`. */
async function cpuPairProbe(): Promise<number[]> {
  const runs: number[] = [];
  for (let pair = 0; pair < 3; pair++) runs.push(await cpuPairSeconds());
  return runs;
}

export async function readMachineFacts(url: string): Promise<MachineFacts> {
  const postgres = await withClient(url, async (client) => {
    const version = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    const settings = await client.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings
        WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather', 'jit')
        ORDER BY name`,
    );
    const text = settings.rows
      .map((s) => {
        // shared_buffers is in 8 kB pages, work_mem in kB: show both in MB.
        if (s.unit === "8kB") return `${s.name}=${Math.round((Number(s.setting) * 8) / 1024)}MB`;
        if (s.unit === "kB") return `${s.name}=${Math.round(Number(s.setting) / 1024)}MB`;
        return `${s.name}=${s.setting}`;
      })
      .join(", ");
    return { version: version.rows[0]?.v ?? "?", settings: text };
  });
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? "?",
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres: postgres.version,
    postgresSettings: postgres.settings,
    cpuProbeSeconds: cpuProbe(),
    cpuPairProbeSeconds: await cpuPairProbe(),
  };
}
