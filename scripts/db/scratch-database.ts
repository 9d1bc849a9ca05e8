import pg from "pg";

export interface ScratchDatabase {
  url: string;
  /** True when no Postgres was reachable and an embedded PGlite server stands in. */
  embedded: boolean;
  /** Drops the database (or stops the embedded server). */
  drop(): Promise<void>;
}

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function postgresReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A new, empty database named `<prefix>_<random>` on the machine's Postgres. Without a reachable
 * Postgres (a laptop with only Node) it falls back to an in-memory embedded PGlite server.
 */
export async function createScratchDatabase(prefix: string): Promise<ScratchDatabase> {
  if (!(await postgresReachable(ADMIN_URL))) {
    const { startEmbeddedDatabase } = await import("../local/embedded");
    const embedded = await startEmbeddedDatabase({ dataDir: "memory://" });
    console.warn(`No Postgres at ${new URL(ADMIN_URL).host}: testing against embedded PGlite.`);
    return { url: embedded.url, embedded: true, drop: () => embedded.close() };
  }
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    embedded: false,
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
