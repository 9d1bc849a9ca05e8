import { neonConfig, Pool, type PoolClient } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-serverless";
import { isRetryableFailure } from "./connection-errors";
import * as schema from "./schema";

export type Database = ReturnType<typeof drizzle<typeof schema>>;

export interface DatabaseConfig {
  DATABASE_URL: string;
  /** Local development and tests only: a relay standing in for Neon's WebSocket proxy. */
  NEON_WS_PROXY?: string;
}

export interface SessionLimits {
  /**
   * Cancels any statement running longer (Postgres `statement_timeout`, error 57014), so an
   * expensive query fails fast instead of holding a connection. 0 or absent: no limit.
   */
  statementTimeoutMs?: number;
}

export interface DatabaseHandle {
  db: Database;
  /** Ends the pool; call it through `waitUntil` once the response no longer needs the database. */
  close(): Promise<void>;
}

function configureDriver(proxy: string | undefined): void {
  if (!proxy) return;
  neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  // The pipelined startup breaks SCRAM and trust logins against a plain Postgres.
  neonConfig.pipelineConnect = false;
}

/**
 * Whether a connection string names a pooled endpoint (Neon's pooler: `…-pooler.` in the host).
 * In transaction mode a pooler hands one server session to many clients in turn, so a session
 * `SET` would outlive the request and reach other clients, the cron refresh included.
 */
export function isPooledEndpoint(databaseUrl: string): boolean {
  try {
    return new URL(databaseUrl).hostname.includes("-pooler.");
  } catch {
    return false;
  }
}

/**
 * The session settings an API connection starts with: the statement timeout and JIT off. Not
 * startup parameters (poolers refuse those), and none on a pooled endpoint, where the API's role
 * carries them instead (`ALTER ROLE … SET`, see docs/operations.md).
 */
export function sessionSettings(databaseUrl: string, limits: SessionLimits = {}): string[] {
  if (isPooledEndpoint(databaseUrl)) return [];
  const timeout = Math.trunc(limits.statementTimeoutMs ?? 0);
  // JIT off: compiling a plan costs 100–200 ms here, more than many of these queries run.
  return [...(timeout > 0 ? [`SET statement_timeout = ${timeout}`] : []), "SET jit = off"];
}

/** The pause before the one retry: 20–80 ms, so a burst of retries does not arrive at once. */
const retryPauseMs = () => 20 + Math.random() * 60;

/**
 * Every query outside a transaction is retried once, after a short random pause, when the
 * database was unavailable (a pooled session that had died, a restart, a full connection table;
 * src/db/connection-errors.ts): the API only reads, so a retry never repeats a write, and the
 * failed connection has left the pool, so the retry gets a fresh one. A second failure is the
 * caller's (a 503). Timeouts and errors of the query itself are not retried. Each query's time,
 * its retry included, goes to `onQuery`.
 */
function retryOnceWhenUnavailable(pool: Pool, onQuery?: (ms: number) => void): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  const retrying = async (...args: unknown[]) => {
    const started = Date.now();
    try {
      return await query(...args);
    } catch (error) {
      if (!isRetryableFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, retryPauseMs()));
      return await query(...args);
    } finally {
      onQuery?.(Date.now() - started);
    }
  };
  pool.query = retrying as typeof pool.query;
}

/**
 * Opens connections of the request's pool at once until it can run `count` statements side by
 * side, one of them the statement the caller has just started beside this call, and returns when
 * they are open. A request that will run statements side by side calls it beside the statement
 * before them: their connections open while that statement runs instead of after it. Opening one
 * costs a Worker far from its database several round trips (TCP, TLS, the WebSocket upgrade, the
 * login), which would otherwise come on top of the request's sequential statements.
 */
export async function connectionsOpen(db: Database, count: number): Promise<void> {
  const pool = db.$client;
  // Held until all are open: one released early would be handed to the next connect, not a new one.
  // A failed open is not the caller's failure: the statement that needs the connection retries it.
  const held = await Promise.all(
    Array.from({ length: Math.max(0, count - 1) }, () => pool.connect().catch(() => undefined)),
  );
  for (const client of held) client?.release();
}

/**
 * A pool per request: Workers cannot share sockets between requests, so a module-level pool
 * would fail on the second request.
 */
export function openDatabase(
  config: DatabaseConfig,
  limits: SessionLimits = {},
  /** Told each query's time, retry included (the request's Server-Timing and log line). */
  onQuery?: (ms: number) => void,
): DatabaseHandle {
  configureDriver(config.NEON_WS_PROXY);
  const pool = new Pool({ connectionString: config.DATABASE_URL, max: 4 });
  // Socket teardown after the response can emit errors nobody awaits; they are not failures.
  pool.on("error", () => {});
  // Queued ahead of each new connection's first query.
  const settings = sessionSettings(config.DATABASE_URL, limits);
  if (settings.length > 0) {
    pool.on("connect", (client: PoolClient) => {
      client.query(settings.join("; ")).catch(() => {});
    });
  }
  retryOnceWhenUnavailable(pool, onQuery);
  const db = drizzle({ client: pool, schema });
  let closed = false;
  return {
    db,
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end().catch(() => {});
    },
  };
}
