import type { Context } from "hono";
import type { AppEnv } from "../env";
import { sha256Hex } from "./secrets";

/**
 * KV read-through cache for JSON answers (contract section 9). KV's own minimum TTL is 60 s, so
 * freshness is judged from the stored timestamp, not from KV expiry. KV failures degrade to an
 * uncached answer, never to an error.
 */

/** Bump when a cached response shape or a metric definition changes: old entries are then never read. */
export const CACHE_SCHEMA_VERSION = "v2";
const KV_MINIMUM_TTL_SECONDS = 60;

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
    try {
      const entry = await c.env.CACHE.get<StoredEntry<T>>(key, "json");
      if (entry) {
        const age = (now - entry.storedAt) / 1000;
        if (age >= 0 && age < freshSeconds) {
          const freshFor = Math.max(0, Math.floor(freshSeconds - age));
          return { value: entry.value, freshFor, cacheStatus: `${CACHE_NAME}; hit; ttl=${freshFor}` };
        }
        lookup = "fwd=stale";
      }
    } catch (error) {
      console.warn(`[${c.get("requestId")}] cache read failed; answering uncached`, error);
      lookup = "fwd=miss; detail=kv-unavailable";
    }
  }

  const value = await compute();
  const entry: StoredEntry<T> = { storedAt: now, value };
  const write = Promise.resolve()
    .then(() =>
      c.env.CACHE.put(key, JSON.stringify(entry), {
        expirationTtl: Math.max(KV_MINIMUM_TTL_SECONDS, Math.ceil(freshSeconds)),
      }),
    )
    .catch((error: unknown) => console.warn(`[${c.get("requestId")}] cache write failed`, error));
  c.executionCtx.waitUntil(write);
  return { value, freshFor: freshSeconds, cacheStatus: `${CACHE_NAME}; ${lookup}; stored` };
}
