import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AppEnv } from "../env";
import { RequestTiming } from "../lib/request-timing";

/** The `Server-Timing` value of an answer (W3C Server Timing): database time, cache, total. */
export function serverTimingValue(
  timing: RequestTiming,
  totalMs: number,
  cacheStatus: string | null,
): string {
  const metrics = [
    `db;dur=${timing.databaseMs};desc="${timing.queries} ${timing.queries === 1 ? "query" : "queries"}"`,
  ];
  // RFC 9211's Cache-Status: `<cache>; hit` or `<cache>; fwd=miss…`.
  if (cacheStatus) metrics.push(`cache;desc="${/;\s*hit\b/.test(cacheStatus) ? "hit" : "miss"}"`);
  metrics.push(`total;dur=${totalMs}`);
  return metrics.join(", ");
}

/**
 * One structured JSON log line per request (request id, route pattern, project, status,
 * duration, database time and queries, cache status) and a `Server-Timing` header on every
 * answer, so an operator can tell from `wrangler tail` or the Workers logs where the time went.
 * A streamed export logs its line when the body ends: the rows and bytes it sent, how it ended
 * (`complete`, `failed`, `cancelled` by the client), the whole duration and database time, and
 * `headersMs` (what `Server-Timing`, sent before the body, could say). Never the URL or its query
 * string, which carry the caller's filters.
 */
export const observeRequests: MiddlewareHandler<AppEnv> = async (c, next) => {
  const startedAt = Date.now();
  const timing = new RequestTiming();
  c.set("timing", timing);
  await next();
  const durationMs = Date.now() - startedAt;
  const cacheStatus = c.res.headers.get("Cache-Status");
  const value = serverTimingValue(timing, durationMs, cacheStatus);
  try {
    c.res.headers.append("Server-Timing", value);
  } catch {
    // A response passed through from elsewhere has immutable headers: answer a copy.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.append("Server-Timing", value);
  }
  // A browser shows Server-Timing to the page's script (Resource Timing) only for the origins
  // named here: the same ones CORS allows.
  const allowedOrigin = c.res.headers.get("Access-Control-Allow-Origin");
  if (allowedOrigin) c.res.headers.set("Timing-Allow-Origin", allowedOrigin);
  const line = {
    event: "request",
    requestId: c.get("requestId"),
    method: c.req.method,
    // After `next()` the route index is that of the handler that answered.
    route: routePath(c),
    projectId: c.get("project")?.id,
    status: c.res.status,
    durationMs,
    databaseMs: timing.databaseMs,
    queries: timing.queries,
    cache: cacheStatus ?? undefined,
  };
  const streamed = c.get("streamed");
  if (!streamed) {
    console.log(JSON.stringify(line));
    return;
  }
  c.executionCtx.waitUntil(
    streamed.then(({ rows, bytes, outcome }) =>
      console.log(
        JSON.stringify({
          ...line,
          durationMs: Date.now() - startedAt,
          headersMs: durationMs,
          databaseMs: timing.databaseMs,
          queries: timing.queries,
          rows,
          bytes,
          stream: outcome,
        }),
      ),
    ),
  );
};
