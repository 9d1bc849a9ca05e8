import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { cacheKey } from "../../src/middleware/cache";
import { createTenant, credentialHeaders, insertEvents, type Tenant } from "../support/factories";
import { call, testDatabase } from "../support/worker/http";

const database = testDatabase();
let tenant: Tenant;
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

beforeAll(async () => {
  tenant = await createTenant(database.db);
  await insertEvents(database.db, [
    { projectId: tenant.projectId, sessionId: "one", createdAt: minutesAgo(1) },
  ]);
});
afterAll(() => database.close());
afterEach(() => {
  vi.useRealTimers();
});

const livePath = (minutes: number) => `/insights/${tenant.projectId}/live?minutes=${minutes}`;
const get = (path: string, headers: Record<string, string> = {}) =>
  call(path, { headers: { ...credentialHeaders(tenant.read), ...headers } });

describe("KV cache on /live", () => {
  it("misses, stores, then hits with the same body and ETag", async () => {
    const first = await get(livePath(7));
    const second = await get(livePath(7));
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-status")).toBe("analytics-kv; fwd=miss; stored");
    expect(first.headers.get("cache-control")).toBe("private, max-age=10");
    // A browser's cache must not hand this answer to a request with other credentials.
    expect(first.headers.get("vary")).toBe("Authorization, openpanel-client-id, openpanel-client-secret");
    // The isolate kept a copy of what it stored: the repeat needs no KV read.
    expect(second.headers.get("cache-status")).toMatch(/^analytics-kv; hit; ttl=(9|10); detail=memory$/);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(first.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it("serves the stored answer while fresh and recomputes once it is older than 10 s", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const path = livePath(8);
    expect((await get(path)).body).toEqual({ visitors: 1 });
    await insertEvents(database.db, [
      { projectId: tenant.projectId, sessionId: "two", createdAt: minutesAgo(1) },
    ]);
    // Still fresh: the cached count, not the new one.
    vi.advanceTimersByTime(9_000);
    const fresh = await get(path);
    expect(fresh.body).toEqual({ visitors: 1 });
    expect(fresh.headers.get("cache-status")).toBe("analytics-kv; hit; ttl=1; detail=memory");

    // 11 s after it was stored both copies are stale (KV itself would keep it for 60 s).
    vi.advanceTimersByTime(2_000);
    const refreshed = await get(path);
    expect(refreshed.body).toEqual({ visitors: 2 });
    expect(refreshed.headers.get("cache-status")).toBe("analytics-kv; fwd=stale; stored");
  });

  it("answers from KV when this isolate holds no copy, then from the copy it kept", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    // Written by another isolate, as far as this one knows.
    const key = await cacheKey(tenant.projectId, "live", { minutes: 12 });
    await env.CACHE.put(key, JSON.stringify({ storedAt: Date.now() - 3_000, value: { visitors: 42 } }));
    const fromKv = await get(livePath(12));
    expect(fromKv.body).toEqual({ visitors: 42 });
    expect(fromKv.headers.get("cache-status")).toBe("analytics-kv; hit; ttl=7");
    expect(fromKv.headers.get("cache-control")).toBe("private, max-age=7");
    const fromMemory = await get(livePath(12));
    expect(fromMemory.body).toEqual({ visitors: 42 });
    expect(fromMemory.headers.get("cache-status")).toBe("analytics-kv; hit; ttl=7; detail=memory");
    expect(fromMemory.headers.get("etag")).toBe(fromKv.headers.get("etag"));
  });

  it("ignores a stale KV entry and stores the recomputed answer", async () => {
    const key = await cacheKey(tenant.projectId, "live", { minutes: 13 });
    await env.CACHE.put(key, JSON.stringify({ storedAt: Date.now() - 11_000, value: { visitors: 42 } }));
    const response = await get(livePath(13));
    expect(response.body).toEqual({ visitors: 2 });
    expect(response.headers.get("cache-status")).toBe("analytics-kv; fwd=stale; stored");
    const again = await get(livePath(13));
    expect(again.body).toEqual({ visitors: 2 });
    expect(again.headers.get("cache-status")).toMatch(/^analytics-kv; hit; ttl=(9|10); detail=memory$/);
  });

  it("skips the cache read on Cache-Control: no-cache", async () => {
    await get(livePath(9));
    const bypass = await get(livePath(9), { "Cache-Control": "no-cache" });
    expect(bypass.headers.get("cache-status")).toBe("analytics-kv; fwd=request; stored");
  });

  it("answers 304 to a matching If-None-Match, keeping ETag and caching headers", async () => {
    const first = await get(livePath(10));
    const etag = first.headers.get("etag") ?? "";
    const notModified = await get(livePath(10), { "If-None-Match": etag });
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBe("");
    expect(notModified.headers.get("etag")).toBe(etag);
    expect(notModified.headers.get("cache-control")).toMatch(/^private, max-age=\d+$/);
    expect(notModified.headers.get("vary")).toBe(
      "Authorization, openpanel-client-id, openpanel-client-secret",
    );
    expect(notModified.headers.get("x-request-id")).toBeTruthy();
    const listed = await get(livePath(10), { "If-None-Match": `"other", ${etag}` });
    expect(listed.status).toBe(304);
    const stale = await get(livePath(10), { "If-None-Match": '"something-else"' });
    expect(stale.status).toBe(200);
  });

  it("answers without the cache when KV throws", async () => {
    const broken = {
      get: () => Promise.reject(new Error("KV down")),
      put: () => Promise.reject(new Error("KV down")),
    } as unknown as KVNamespace;
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`http://api.test${livePath(11)}`, { headers: credentialHeaders(tenant.read) }),
      { ...env, CACHE: broken },
      ctx,
    );
    const body = await response.json();
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    expect(body).toEqual({ visitors: 2 });
    expect(response.headers.get("cache-status")).toBe(
      "analytics-kv; fwd=miss; detail=kv-unavailable; stored",
    );
  });
});

describe("identical concurrent misses in one isolate", () => {
  const metricsPath = (day: string) =>
    `/insights/${tenant.projectId}/metrics?startDate=${day}&endDate=${day}&timezone=UTC`;

  it("are computed once: the others wait for that answer instead of querying again", async () => {
    const responses = await Promise.all(Array.from({ length: 8 }, () => get(metricsPath("2026-01-05"))));
    const statuses = responses.map((response) => response.headers.get("cache-status") ?? "");
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(statuses.filter((status) => status.includes("stored"))).toHaveLength(1);
    expect(statuses.filter((status) => status.includes("detail=coalesced")).length).toBeGreaterThan(0);
    const bodies = new Set(responses.map((response) => JSON.stringify(response.body)));
    expect(bodies.size).toBe(1);
  });

  it("but a request with Cache-Control: no-cache computes its own", async () => {
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => get(metricsPath("2026-01-06"), { "Cache-Control": "no-cache" })),
    );
    for (const response of responses) {
      expect(response.headers.get("cache-status")).toContain("fwd=request; stored");
    }
  });
});
