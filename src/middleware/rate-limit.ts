import type { MiddlewareHandler } from "hono";
import type { RateLimitDecision } from "../durable-objects/client-rate-limiter";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";
import { logFailure } from "../lib/failure-log";

const WINDOW_MS = 10_000;

function configuredLimit(value: string | undefined): number {
  const limit = Number(value ?? "100");
  return Number.isFinite(limit) && limit >= 0 ? Math.floor(limit) : 100;
}

async function decide(
  env: AppEnv["Bindings"],
  clientId: string,
  limit: number,
): Promise<RateLimitDecision | undefined> {
  try {
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(clientId));
    return await limiter.hit(limit, WINDOW_MS);
  } catch (error) {
    // The limiter is a guard, not a dependency: if it is unreachable, serve the request.
    logFailure("warn", { event: "rate_limiter_unavailable" }, error);
    return undefined;
  }
}

/**
 * Per authenticated client: RATE_LIMIT_PER_10S requests per 10 s (0 turns it off). Keyed on the
 * verified client id, never on a header the caller controls. Every authenticated response
 * carries the RateLimit-* headers; the request over the limit gets 429 with Retry-After.
 */
export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limit = configuredLimit(c.env.RATE_LIMIT_PER_10S);
  if (limit === 0) return next();
  const decision = await decide(c.env, c.get("client").id, limit);
  if (!decision) return next();
  const headers = {
    "RateLimit-Limit": String(decision.limit),
    "RateLimit-Remaining": String(decision.remaining),
    "RateLimit-Reset": String(decision.resetSeconds),
  };
  if (!decision.allowed) {
    throw new ApiError({
      code: "RATE_LIMITED",
      detail: `More than ${decision.limit} requests in 10 seconds. Retry after ${decision.resetSeconds} s.`,
      headers: { ...headers, "Retry-After": String(decision.resetSeconds) },
    });
  }
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
};
