import { existsSync, statfsSync } from "node:fs";
import pg from "pg";

/**
 * A bulk load's watch over the disk of the Postgres it loads into. A first build holds what it
 * writes until it commits (docs/design/billion-events.md), and a 30M-event load was once stopped
 * by hand with 16 GB left on the disk the machine's other Postgres and the tests share. This
 * samples the free space of the data directory's file system every few seconds, remembers the
 * least seen (the load's peak), and when it falls under the floor ends the loading
 * connections (pg_terminate_backend: a cancel would miss a connection between statements): the
 * open transaction (the events' COPY, or the first build after it) rolls back and gives its files
 * back, and the run stops with a message instead of a full disk.
 *
 * It works where the server's data directory is on this machine (the benchmark's own Postgres);
 * for a remote server (Neon) it reports that it is off.
 */

const GIB = 1024 ** 3;

export interface DiskSample {
  /** Bytes free to an unprivileged writer on the data directory's file system. */
  freeBytes: number;
}

/** What the guard saw over a load. */
export interface DiskWatch {
  /** Free bytes when the watch started. */
  startFreeBytes: number;
  /** The least free bytes seen: start − least is the load's peak on disk (other writers aside). */
  leastFreeBytes: number;
  /** Set when the floor was crossed and the load stopped. */
  stoppedBecause?: string;
}

/** The verdict on one sample: stop when the free space is under the floor. */
export function diskVerdict(sample: DiskSample, floorBytes: number): string | undefined {
  if (sample.freeBytes >= floorBytes) return undefined;
  return (
    `only ${gib(sample.freeBytes)} left on the disk of the database (the floor is ${gib(floorBytes)}, ` +
    "--min-free-gb): the load was stopped before it filled the disk (its open transaction rolled back; " +
    "the data set has no marker, so the next run loads it again)"
  );
}

export const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GB`;

function freeBytesAt(directory: string): number {
  const stats = statfsSync(directory);
  return Number(stats.bavail) * Number(stats.bsize);
}

export interface RunningGuard {
  /** Stops sampling and returns what was seen. */
  stop(): DiskWatch;
}

/**
 * Starts watching the disk of `database`'s server while a load runs; undefined (after logging why)
 * when the data directory is not on this machine or cannot be read.
 */
export async function guardDisk(
  adminUrl: string,
  database: string,
  floorBytes: number,
  log: (line: string) => void,
  everyMillis = 5_000,
): Promise<RunningGuard | undefined> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  let directory: string | undefined;
  try {
    directory = (await admin.query<{ data_directory: string }>("SHOW data_directory")).rows[0]
      ?.data_directory;
  } catch {
    directory = undefined;
  }
  if (directory === undefined || !existsSync(directory)) {
    await admin.end();
    log("disk guard: off (the server's data directory is not on this machine or not readable)");
    return undefined;
  }
  const watched = directory;
  const startFreeBytes = freeBytesAt(watched);
  const watch: DiskWatch = { startFreeBytes, leastFreeBytes: startFreeBytes };
  log(`disk guard: ${gib(startFreeBytes)} free at the start, stopping the load under ${gib(floorBytes)}`);
  let cancelling: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    const freeBytes = freeBytesAt(watched);
    watch.leastFreeBytes = Math.min(watch.leastFreeBytes, freeBytes);
    const verdict = watch.stoppedBecause === undefined ? diskVerdict({ freeBytes }, floorBytes) : undefined;
    if (verdict === undefined) return;
    watch.stoppedBecause = verdict;
    log(`disk guard: ${verdict}`);
    cancelling = admin
      .query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [database],
      )
      .catch((error: unknown) => log(`disk guard: ending the load failed: ${String(error)}`));
  }, everyMillis);
  return {
    stop() {
      clearInterval(timer);
      void Promise.resolve(cancelling).finally(() => admin.end().catch(() => undefined));
      return { ...watch };
    },
  };
}
