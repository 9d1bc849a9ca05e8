import type { Context, MiddlewareHandler } from "hono";
import type { RateLimitDecision } from "../durable-objects/client-rate-limiter";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";
import { logFailure } from "../lib/failure-log";
import { authenticate, isRecentlyVerifiedClient, readCredentials } from "./auth";

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

/** The one policy's name in the structured RateLimit fields, and its window. */
const RATE_POLICY = '"per-client"';
const WINDOW_SECONDS = WINDOW_MS / 1000;

/** What this isolate last heard of a client's budget, less the requests it let through since. */
interface BudgetEstimate {
  limit: number;
  remaining: number;
  resetsAt: number;
}
const estimates = new Map<string, BudgetEstimate>();
const MAX_ESTIMATES = 10_000;

/**
 * While more than this many requests of a budget are left, the isolate answers without waiting
 * for the limiter (which still counts the request, after the answer). Isolates that do so at once
 * can overshoot a budget by at most this reserve each before they hear of it.
 */
export const optimisticReserve = (limit: number) => Math.max(5, Math.ceil(limit / 5));

function remember(clientId: string, decision: RateLimitDecision | undefined, now: number): void {
  if (!decision) return;
  if (estimates.size >= MAX_ESTIMATES && !estimates.has(clientId)) estimates.clear();
  estimates.set(clientId, {
    limit: decision.limit,
    remaining: decision.remaining,
    resetsAt: now + decision.resetSeconds * 1000,
  });
}

/**
 * The decision for a request when the isolate's estimate leaves room: counted here, and in the
 * limiter after the answer. Undefined when the limiter must be asked first.
 */
function decideLocally(
  c: Context<AppEnv>,
  clientId: string,
  limit: number,
  now: number,
): RateLimitDecision | undefined {
  const known = estimates.get(clientId);
  if (
    !known ||
    known.limit !== limit ||
    known.resetsAt <= now ||
    known.remaining <= optimisticReserve(limit)
  ) {
    return undefined;
  }
  known.remaining -= 1;
  c.executionCtx.waitUntil(
    decide(c.env, clientId, limit).then((decision) => remember(clientId, decision, now)),
  );
  return {
    allowed: true,
    limit,
    remaining: known.remaining,
    resetSeconds: Math.max(1, Math.ceil((known.resetsAt - now) / 1000)),
  };
}

/**
 * Counts one request against a client's budget: a 429 with Retry-After past it, else the
 * RateLimit-* headers for the answer (none when the limiter is unreachable). A cached answer takes
 * a millisecond; the limiter's round trip is kept off its path while the budget has room.
 */
async function countRequest(
  c: Context<AppEnv>,
  clientId: string,
  limit: number,
): Promise<Record<string, string>> {
  const now = Date.now();
  let decision = decideLocally(c, clientId, limit, now);
  if (!decision) {
    decision = await decide(c.env, clientId, limit);
    remember(clientId, decision, now);
  }
  if (!decision) return {};
  const headers = {
    "RateLimit-Limit": String(decision.limit),
    "RateLimit-Remaining": String(decision.remaining),
    "RateLimit-Reset": String(decision.resetSeconds),
    // The IETF draft's structured fields (draft-ietf-httpapi-ratelimit-headers): the policy
    // (quota `q` per window `w` seconds) and what is left of it (`r`) until reset (`t` seconds).
    "RateLimit-Policy": `${RATE_POLICY};q=${decision.limit};w=${WINDOW_SECONDS}`,
    RateLimit: `${RATE_POLICY};r=${decision.remaining};t=${decision.resetSeconds}`,
  };
  if (!decision.allowed) {
    throw new ApiError({
      code: "RATE_LIMITED",
      detail: `More than ${decision.limit} requests in 10 seconds. Retry after ${decision.resetSeconds} s.`,
      headers: { ...headers, "Retry-After": String(decision.resetSeconds) },
    });
  }
  return headers;
}

/**
 * Per client: RATE_LIMIT_PER_10S requests per 10 s (0 turns it off), counted in one Durable
 * Object per client id whichever isolate serves the request.
 *
 * When the client id the request names was verified in this isolate lately, the request is
 * counted before its credentials are checked, so a burst past the budget is refused without any
 * database work. Otherwise it is counted once authentication has verified the id; a header the
 * caller controls is never counted unless it names a real client. Every counted response carries
 * the RateLimit-* headers; the request over the limit gets 429 with Retry-After.
 */
export const admitClient: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limit = configuredLimit(c.env.RATE_LIMIT_PER_10S);
  if (limit === 0) return authenticate(c, next);
  const claimed = readCredentials(c.req.raw.headers)?.id.toLowerCase();
  let headers =
    claimed && isRecentlyVerifiedClient(claimed) ? await countRequest(c, claimed, limit) : undefined;
  await authenticate(c, async () => {
    headers ??= await countRequest(c, c.get("client").id, limit);
    await next();
  });
  for (const [name, value] of Object.entries(headers ?? {})) c.res.headers.set(name, value);
};
