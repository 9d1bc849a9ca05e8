import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import {
  basicAuthHeaders,
  createClient,
  createTenant,
  credentialHeaders,
  type Tenant,
  type TestClient,
} from "../support/factories";
import { call, expectProblem, testDatabase } from "../support/worker/http";

/**
 * The access matrix of contract section 1, run against every authenticated route.
 * A new route joins by one line here.
 */
const ROUTES: Array<{ name: string; path: (projectId: string) => string }> = [
  { name: "GET /insights/{projectId}/live", path: (projectId) => `/insights/${projectId}/live` },
  { name: "GET /insights/{projectId}/metrics", path: (projectId) => `/insights/${projectId}/metrics` },
  { name: "GET /insights/{projectId}/pages", path: (projectId) => `/insights/${projectId}/pages` },
  {
    name: "GET /insights/{projectId}/referrer_name",
    path: (projectId) => `/insights/${projectId}/referrer_name`,
  },
  { name: "GET /insights/{projectId}/city", path: (projectId) => `/insights/${projectId}/city` },
  { name: "GET /export/events", path: (projectId) => `/export/events?projectId=${projectId}` },
  {
    name: "GET /export/events (CSV)",
    path: (projectId) => `/export/events?project_id=${projectId}&format=csv`,
  },
  {
    name: "GET /export/charts",
    path: (projectId) =>
      `/export/charts?projectId=${projectId}&series=${encodeURIComponent('[{"name":"screen_view"}]')}`,
  },
];

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
});
afterAll(() => database.close());

describe.each(ROUTES)("$name", (route) => {
  it("answers a read client of the project", async () => {
    const response = await call(route.path(tenant.projectId), { headers: credentialHeaders(tenant.read) });
    expect(response.status).toBe(200);
  });

  it("accepts HTTP Basic credentials", async () => {
    const response = await call(route.path(tenant.projectId), { headers: basicAuthHeaders(tenant.read) });
    expect(response.status).toBe(200);
  });

  it("answers a root client for any project of its organization", async () => {
    const own = await call(route.path(tenant.projectId), { headers: credentialHeaders(tenant.root) });
    const sibling = await call(route.path(tenant.siblingProjectId), {
      headers: credentialHeaders(tenant.root),
    });
    expect([own.status, sibling.status]).toEqual([200, 200]);
  });

  it("refuses a request without credentials", async () => {
    expectProblem(await call(route.path(tenant.projectId)), 401, "UNAUTHENTICATED");
  });

  it("gives one answer for a wrong secret, a malformed id, an unknown id and half credentials", async () => {
    const attempts: Array<Record<string, string>> = [
      { ...credentialHeaders(tenant.read), "openpanel-client-secret": "wrong" },
      { ...credentialHeaders(tenant.read), "openpanel-client-id": "not-a-uuid" },
      { ...credentialHeaders(tenant.read), "openpanel-client-id": crypto.randomUUID() },
      { "openpanel-client-id": tenant.read.id },
      { Authorization: "Basic !!!" },
      { Authorization: `Basic ${btoa(`${tenant.read.id}:wrong`)}` },
      { Authorization: `Bearer ${tenant.read.secret}` },
    ];
    const details = new Set<string>();
    for (const headers of attempts) {
      const response = await call(route.path(tenant.projectId), { headers });
      expectProblem(response, 401, "UNAUTHENTICATED");
      details.add((response.body as { detail: string }).detail);
    }
    expect(details.size).toBe(1);
  });

  it("forbids write clients", async () => {
    const response = await call(route.path(tenant.projectId), { headers: credentialHeaders(tenant.write) });
    expectProblem(response, 403, "CLIENT_TYPE_FORBIDDEN");
  });

  it("hides other projects of the organization from a read client", async () => {
    const response = await call(route.path(tenant.siblingProjectId), {
      headers: credentialHeaders(tenant.read),
    });
    expectProblem(response, 404, "PROJECT_NOT_FOUND");
  });

  it("hides other organizations' projects from read and root clients alike", async () => {
    const byRead = await call(route.path(tenant.otherProjectId), { headers: credentialHeaders(tenant.read) });
    const byRoot = await call(route.path(tenant.otherProjectId), { headers: credentialHeaders(tenant.root) });
    const reverse = await call(route.path(tenant.projectId), {
      headers: credentialHeaders(tenant.otherRoot),
    });
    expectProblem(byRead, 404, "PROJECT_NOT_FOUND");
    expectProblem(byRoot, 404, "PROJECT_NOT_FOUND");
    expectProblem(reverse, 404, "PROJECT_NOT_FOUND");
  });

  it("answers a missing project exactly like a forbidden one", async () => {
    const missing = await call(route.path("no-such-project"), { headers: credentialHeaders(tenant.root) });
    const forbidden = await call(route.path(tenant.otherProjectId), {
      headers: credentialHeaders(tenant.root),
    });
    expectProblem(missing, 404, "PROJECT_NOT_FOUND");
    expect((missing.body as { title: string }).title).toBe((forbidden.body as { title: string }).title);
  });

  it("is read-only: other methods get 405 with Allow before authentication", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const response = await call(route.path(tenant.projectId), { method });
      expectProblem(response, 405, "METHOD_NOT_ALLOWED");
      expect(response.headers.get("allow")).toBe("GET, HEAD");
    }
  });

  it("answers HEAD like GET without a body", async () => {
    const response = await call(route.path(tenant.projectId), {
      method: "HEAD",
      headers: credentialHeaders(tenant.read),
    });
    expect(response.status).toBe(200);
    expect(response.body).toBe("");
  });
});

describe("rate limiting", () => {
  /** Runs the Worker with a small limit; each test uses its own client, so counters never collide. */
  async function hit(path: string, client: TestClient, limit: string) {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`http://api.test${path}`, { headers: credentialHeaders(client) }),
      { ...env, RATE_LIMIT_PER_10S: limit },
      ctx,
    );
    const text = await response.text();
    await waitOnExecutionContext(ctx);
    return { status: response.status, headers: response.headers, text };
  }

  /** A read client of the tenant's project that no other test uses. */
  const ownClient = () =>
    createClient(database.db, {
      type: "read",
      organizationId: tenant.organizationId,
      projectId: tenant.projectId,
    });

  it("counts per authenticated client, announces the budget and answers 429 with Retry-After", async () => {
    const client = await ownClient();
    const path = `/insights/${tenant.projectId}/live`;
    const responses = [];
    for (let i = 0; i < 4; i++) responses.push(await hit(path, client, "3"));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(responses.map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["2", "1", "0", "0"]);
    responses.forEach((response, i) => {
      expect(response.headers.get("ratelimit-limit")).toBe("3");
      const reset = Number(response.headers.get("ratelimit-reset"));
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(10);
      // The IETF draft's structured fields say the same.
      expect(response.headers.get("ratelimit-policy")).toBe('"per-client";q=3;w=10');
      expect(response.headers.get("ratelimit")).toBe(`"per-client";r=${Math.max(0, 2 - i)};t=${reset}`);
    });
    const limited = responses[3];
    expect(limited?.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(limited?.text ?? "{}").code).toBe("RATE_LIMITED");
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    // Another client of the same project has its own budget.
    const other = await ownClient();
    expect((await hit(path, other, "3")).status).toBe(200);
  });

  it("keeps the limiter off the answer's path while the budget has room, and still counts the request", async () => {
    const client = await ownClient();
    const path = `/insights/${tenant.projectId}/live`;
    // The first request waits for the limiter: the isolate knows nothing of this budget yet.
    const first = await hit(path, client, "100");
    expect(first.headers.get("ratelimit-remaining")).toBe("99");

    // A limiter that answers only when the test lets it: the request must not wait for it.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked = 0;
    const heldLimiter = {
      idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
      get: (id: DurableObjectId) => ({
        hit: async (limit: number, windowMs: number) => {
          asked++;
          await held;
          return env.RATE_LIMITER.get(id).hit(limit, windowMs);
        },
      }),
    } as unknown as Env["RATE_LIMITER"];
    const ctx = createExecutionContext();
    const second = await worker.fetch(
      new Request(`http://api.test${path}`, { headers: credentialHeaders(client) }),
      { ...env, RATE_LIMIT_PER_10S: "100", RATE_LIMITER: heldLimiter },
      ctx,
    );
    expect(second.status).toBe(200);
    expect(second.headers.get("ratelimit-remaining")).toBe("98");
    expect(asked).toBe(1);
    release();
    await second.text();
    await waitOnExecutionContext(ctx);

    // The limiter itself counted the request answered without it: two before this count, and
    // this one makes three (a fourth, from here, leaves 96).
    const third = await hit(path, client, "100");
    expect(third.headers.get("ratelimit-remaining")).toBe("97");
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(client.id));
    expect((await limiter.hit(100, 10_000)).remaining).toBe(96);
  });

  it("counts a client verified in this isolate before its secret is checked: past the budget, no verification", async () => {
    const client = await ownClient();
    const path = `/insights/${tenant.projectId}/live`;
    expect((await hit(path, client, "2")).status).toBe(200);
    // The id is known here now: a wrong secret is counted first (1 left, then none) ...
    const wrong = { ...client, secret: `${client.secret}x` };
    expect((await hit(path, wrong, "2")).status).toBe(401);
    const limited = await hit(path, wrong, "2");
    // ... so past the budget it is refused before any credential check, where a 401 would need one.
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.text).code).toBe("RATE_LIMITED");
    expect((await hit(path, client, "2")).status).toBe(429);
  });

  it("never counts an id that was not verified: wrong secrets for a new client spend none of its budget", async () => {
    const client = await ownClient();
    const path = `/insights/${tenant.projectId}/live`;
    const wrong = { ...client, secret: `${client.secret}x` };
    for (let i = 0; i < 4; i++) {
      const response = await hit(path, wrong, "2");
      expect(response.status).toBe(401);
      expect(response.headers.get("ratelimit-limit")).toBeNull();
    }
    const first = await hit(path, client, "2");
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-remaining")).toBe("1");
  });

  it("is off with RATE_LIMIT_PER_10S=0: no 429 and no RateLimit headers", async () => {
    const client = await ownClient();
    for (let i = 0; i < 5; i++) {
      const response = await hit(`/insights/${tenant.projectId}/live`, client, "0");
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-limit")).toBeNull();
      expect(response.headers.get("ratelimit-policy")).toBeNull();
    }
  });
});
