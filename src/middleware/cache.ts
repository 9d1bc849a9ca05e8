import type { Context } from "hono";
import type { AppEnv } from "../env";
import { logFailure } from "../lib/failure-log";
import { SizedMemory } from "../lib/isolate-cache";
import { sha256Hex } from "../lib/secrets";

/**
 * KV read-through cache for JSON answers (contract section 9). KV's own minimum TTL is 60 s, so
 * freshness is judged from the stored timestamp, not from KV expiry. KV failures degrade to an
 * uncached answer, never to an error.
 *
 * The isolate keeps a copy of the answers it stored or read in memory, judged by the same
 * timestamp: a repeated request (a dashboard polling, several widgets asking the same) is answered
 * without a KV read, which is the slowest and the only billed step of a hit.
 */

/** Bump when a cached response shape or a metric definition changes: old entries are then never read. */
export const CACHE_SCHEMA_VERSION = "v2";
const KV_MINIMUM_TTL_SECONDS = 60;
/**
 * Isolate memory for copies of cached answers, by the length of their JSON text (parsed answers
 * take about as much heap again); Workers give an isolate 128 MB in all.
 */
const MEMORY_BUDGET_CHARACTERS = 4 * 1024 * 1024;
/** Larger answers (long minute series, wide charts) are left to KV alone. */
const MEMORY_ENTRY_MAX_CHARACTERS = 256 * 1024;

export interface CachedAnswer<T> {
  value: T;
  /** Seconds the answer stays fresh from now. */
  freshFor: number;
  /** RFC 9211 `Cache-Status` value. */
  cacheStatus: string;
}

interface StoredEntry<T> {
  storedAt: number;
  value: T;
}

/**
 * Copies of cached answers, never authoritative: one is served only while it is fresh by its own
 * `storedAt`, exactly as its KV twin would be.
 */
const memory = new SizedMemory<StoredEntry<unknown>>(MEMORY_BUDGET_CHARACTERS, MEMORY_ENTRY_MAX_CHARACTERS);

/**
 * Single flight within an isolate: the keys whose answer a request of this isolate is computing.
 * Another request that misses the same key waits for that answer to land in `memory` instead of
 * computing it again (a dashboard opening, a cache expiring under many viewers). It polls on its
 * own timers: awaiting the computing request's promise would have one request wait on another's
 * I/O, which the Workers runtime cancels as a hung request.
 */
const inFlight = new Set<string>();
const FOLLOW_POLL_MS = 10;
/** A follower gives up after this and computes the answer itself. */
const FOLLOW_LIMIT_MS = 10_000;

/** The answer another request of this isolate is computing for `key`, once it is there (fresh). */
async function followInFlight<T>(key: string, freshSeconds: number): Promise<CachedAnswer<T> | undefined> {
  const deadline = Date.now() + FOLLOW_LIMIT_MS;
  // The computing request stores its answer in the same step as it leaves `inFlight`, so memory is
  // looked at once more after it has left.
  for (let computing = true; computing; computing = inFlight.has(key) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
    const copy = memory.get(key) as StoredEntry<T> | undefined;
    const freshFor = copy && remainingFreshness(copy.storedAt, Date.now(), freshSeconds);
    if (copy && freshFor !== undefined) {
      return {
        value: copy.value,
        freshFor,
        cacheStatus: `${CACHE_NAME}; hit; ttl=${freshFor}; detail=coalesced`,
      };
    }
  }
  return undefined;
}

export async function entityTag(body: string): Promise<string> {
  return `"${(await sha256Hex(body)).slice(0, 32)}"`;
}

/** A cache key covering the project, the route and every normalized input that shapes the answer. */
export async function cacheKey(projectId: string, route: string, inputs: unknown): Promise<string> {
  return `${CACHE_SCHEMA_VERSION}:${projectId}:${route}:${await sha256Hex(JSON.stringify(inputs))}`;
}

function bypassesCache(c: Context<AppEnv>): boolean {
  const directives = (c.req.header("cache-control") ?? "").toLowerCase();
  return /\bno-cache\b|\bno-store\b/.test(directives);
}

const CACHE_NAME = "analytics-kv";

/** Seconds an entry stored at `storedAt` stays fresh, or undefined once it is stale. */
function remainingFreshness(storedAt: number, now: number, freshSeconds: number): number | undefined {
  const age = (now - storedAt) / 1000;
  return age >= 0 && age < freshSeconds ? Math.max(0, Math.floor(freshSeconds - age)) : undefined;
}

export async function readThrough<T>(
  c: Context<AppEnv>,
  key: string,
  freshSeconds: number,
  compute: () => Promise<T>,
): Promise<CachedAnswer<T>> {
  const now = Date.now();
  let lookup = "fwd=miss";
  if (bypassesCache(c)) {
    lookup = "fwd=request";
  } else {
    const copy = memory.get(key) as StoredEntry<T> | undefined;
    const copyFreshFor = copy && remainingFreshness(copy.storedAt, now, freshSeconds);
    if (copy && copyFreshFor !== undefined) {
      return {
        value: copy.value,
        freshFor: copyFreshFor,
        cacheStatus: `${CACHE_NAME}; hit; ttl=${copyFreshFor}; detail=memory`,
      };
    }
    try {
      const text = await c.env.CACHE.get(key, "text");
      if (text !== null) {
        const entry = JSON.parse(text) as StoredEntry<T>;
        const freshFor = remainingFreshness(entry.storedAt, now, freshSeconds);
        if (freshFor !== undefined) {
          memory.set(key, entry, text.length);
          return { value: entry.value, freshFor, cacheStatus: `${CACHE_NAME}; hit; ttl=${freshFor}` };
        }
        lookup = "fwd=stale";
      }
    } catch (error) {
      logFailure("warn", { event: "cache_read_failed", requestId: c.get("requestId") }, error);
      lookup = "fwd=miss; detail=kv-unavailable";
    }
  }

  // A request that asked for a fresh answer (no-cache) computes its own; any other waits for one
  // already being computed here. One that could not be followed (the computing request failed, or
  // its answer is too large for memory) computes its own too.
  if (lookup !== "fwd=request" && inFlight.has(key)) {
    const followed = await followInFlight<T>(key, freshSeconds);
    if (followed) return followed;
  }
  inFlight.add(key);
  let value: T;
  try {
    value = await compute();
  } finally {
    inFlight.delete(key);
  }
  const entry: StoredEntry<T> = { storedAt: now, value };
  const text = JSON.stringify(entry);
  memory.set(key, entry, text.length);
  const write = Promise.resolve()
    .then(() =>
      c.env.CACHE.put(key, text, {
        expirationTtl: Math.max(KV_MINIMUM_TTL_SECONDS, Math.ceil(freshSeconds)),
      }),
    )
    .catch((error: unknown) =>
      logFailure("warn", { event: "cache_write_failed", requestId: c.get("requestId") }, error),
    );
  c.executionCtx.waitUntil(write);
  return { value, freshFor: freshSeconds, cacheStatus: `${CACHE_NAME}; ${lookup}; stored` };
}

/** Metrics of ranges that reach the present stay fresh 60 s; closed past ranges 24 h (contract section 9). */
export function freshnessFor(range: { window: { end: number } }, now = Date.now()): number {
  return range.window.end > now ? 60 : 86_400;
}
