import type { Context, MiddlewareHandler } from "hono";
import { type Database, openDatabase } from "../db/client";
import type { AppEnv } from "../env";

/**
 * The request's database, opened on first use so requests that never reach it (401s answered
 * from the verification cache, 404s, /openapi.json) open no connection. Every request only
 * reads, so it goes to the read replica when one is configured (DATABASE_REPLICA_URL); writes
 * (the cron refresh, migrations) use DATABASE_URL elsewhere.
 */
export function useDatabase(c: Context<AppEnv>): Database {
  let handle = c.get("database");
  if (!handle) {
    const url = c.env.DATABASE_REPLICA_URL?.trim() || c.env.DATABASE_URL;
    handle = openDatabase(
      { DATABASE_URL: url, NEON_WS_PROXY: c.env.NEON_WS_PROXY },
      { statementTimeoutMs: Number(c.env.STATEMENT_TIMEOUT_MS) },
      (ms) => c.get("timing")?.recordQuery(ms),
    );
    c.set("database", handle);
  }
  return handle.db;
}

/** Ends the request's pool after the response is sent, without delaying it. */
export const closeDatabaseAfterResponse: MiddlewareHandler<AppEnv> = async (c, next) => {
  try {
    await next();
  } finally {
    const handle = c.get("database");
    if (handle) c.executionCtx.waitUntil(handle.close());
  }
};

/**
 * Hands the request's pool over to a streamed body. `closeDatabaseAfterResponse` ends the pool as
 * soon as the handler returns, which would cut a stream that still reads batches; so the pool is
 * taken off the request here and ended through `waitUntil` once `finished` settles (the stream
 * completed, failed or was cancelled by the client). Call it just before returning the stream.
 */
export function closeDatabaseAfterStream(c: Context<AppEnv>, finished: Promise<unknown>): void {
  const handle = c.get("database");
  if (!handle) return;
  c.set("database", undefined);
  const close = () => handle.close();
  c.executionCtx.waitUntil(finished.then(close, close));
}
