import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import journal from "../../drizzle/meta/_journal.json";
import packageJson, { version } from "../../package.json";
import worker from "../../src/index";
import { ERROR_CODES, type ErrorCode, problemType } from "../../src/lib/errors";
import { createTenant, credentialHeaders, type Tenant } from "../support/factories";
import { call, expectProblem, testDatabase } from "../support/worker/http";

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
});
afterAll(() => database.close());

/** Runs the Worker with some bindings replaced, e.g. a database that cannot be reached. */
async function callWithBindings(path: string, bindings: Partial<Env>, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`http://api.test${path}`, init),
    { ...env, ...bindings },
    ctx,
  );
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  return { status: response.status, headers: response.headers, text };
}

const UNREACHABLE = "postgres://postgres@127.0.0.1:1/nowhere";

describe("GET /health", () => {
  it("reports ok after a real database round trip, with the version and the migration level", async () => {
    const response = await call("/health");
    expect(response.status).toBe(200);
    const latest = journal.entries.at(-1);
    expect(response.body).toEqual({
      status: "ok",
      database: "ok",
      version: version,
      // The test database is migrated by the suite's setup, every migration of the journal.
      migrations: {
        applied: journal.entries.length,
        expected: journal.entries.length,
        latest: latest?.tag,
        pending: 0,
      },
      // Null before the suite's first refresh, which this file may precede: the test below sets them.
      refresh: expect.any(Object),
    });
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("states when the derived tables and the session strings were last refreshed, and how long ago", async () => {
    const names = ["sessions", "session_bits"];
    const saved = (
      await database.db.execute<{ name: string; last_run_at: string | null }>(
        sql`select name, last_run_at::text as last_run_at from derived_state where name = any(${sql.param(names)}::text[])`,
      )
    ).rows;
    // The family began 125 s before now, as a run outlasting the cron's minute leaves it; the
    // strings 250 s before, a run behind it. Distinct ages, so a field read from the other row fails.
    const stamp = async (name: string, seconds: number) => {
      const [row] = (
        await database.db.execute<{ last_run_at: string }>(
          sql`insert into derived_state (name, last_run_at) values (${name}, now() - make_interval(secs => ${seconds}))
              on conflict (name) do update set last_run_at = excluded.last_run_at
              returning to_char(last_run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as last_run_at`,
        )
      ).rows;
      return row?.last_run_at;
    };
    const sessionsSet = await stamp("sessions", 125);
    const stringsSet = await stamp("session_bits", 250);
    try {
      const response = await call("/health");
      expect(response.status).toBe(200);
      const body = response.body as {
        status: string;
        refresh: {
          lastRunAt: string;
          ageSeconds: number;
          strings: { lastRunAt: string; ageSeconds: number };
        };
      };
      // Stated, not judged: an old refresh leaves the status ok.
      expect(body.status).toBe("ok");
      expect(body.refresh).toEqual({
        lastRunAt: sessionsSet,
        ageSeconds: expect.any(Number),
        strings: { lastRunAt: stringsSet, ageSeconds: expect.any(Number) },
      });
      expect(body.refresh.ageSeconds).toBeGreaterThanOrEqual(125);
      expect(body.refresh.ageSeconds).toBeLessThan(185);
      expect(body.refresh.strings.ageSeconds).toBeGreaterThanOrEqual(250);
      expect(body.refresh.strings.ageSeconds).toBeLessThan(310);
    } finally {
      for (const name of names) {
        const row = saved.find((candidate) => candidate.name === name);
        await database.db.execute(
          row
            ? sql`update derived_state set last_run_at = ${row.last_run_at}::timestamptz where name = ${name}`
            : sql`delete from derived_state where name = ${name}`,
        );
      }
    }
  });

  it("is degraded while a migration of this version is not applied", async () => {
    const latest = journal.entries.at(-1);
    await database.db.execute(
      sql`delete from drizzle.__drizzle_migrations where created_at = ${latest?.when}`,
    );
    try {
      const response = await call("/health");
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        status: "degraded",
        database: "ok",
        migrations: { applied: journal.entries.length - 1, latest: journal.entries.at(-2)?.tag, pending: 1 },
      });
    } finally {
      await database.db.execute(
        sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('restored-by-test', ${latest?.when})`,
      );
    }
  });

  it("answers 503 with Retry-After when the database is unreachable", async () => {
    const response = await callWithBindings("/health", { DATABASE_URL: UNREACHABLE });
    expect(response.status).toBe(503);
    expect(JSON.parse(response.text)).toEqual({
      status: "degraded",
      database: "unreachable",
      version: version,
    });
    expect(response.headers.get("retry-after")).toBe("5");
  });
});

describe("database failures", () => {
  it("turn into 503 DATABASE_UNAVAILABLE without leaking the connection string", async () => {
    const response = await callWithBindings(
      `/insights/${tenant.projectId}/live`,
      { DATABASE_URL: UNREACHABLE },
      { headers: credentialHeaders({ id: crypto.randomUUID(), secret: "s", type: "read" }) },
    );
    expect(response.status).toBe(503);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("retry-after")).toBe("5");
    const body = JSON.parse(response.text);
    expect(body.code).toBe("DATABASE_UNAVAILABLE");
    expect(response.text).not.toMatch(/postgres:|127\.0\.0\.1|select|at .*\.ts/i);
  });

  // The embedded database serves any database name, so the failure cannot be provoked there.
  it.skipIf(inject("embeddedDatabase"))(
    "other database errors are a bare 500 INTERNAL: no SQL, no stack, no URL",
    async () => {
      const url = new URL(env.DATABASE_URL);
      url.pathname = "/no_such_database_here";
      const response = await callWithBindings(
        `/insights/${tenant.projectId}/live`,
        { DATABASE_URL: url.toString() },
        { headers: credentialHeaders({ id: crypto.randomUUID(), secret: "s", type: "read" }) },
      );
      expect(response.status).toBe(500);
      const body = JSON.parse(response.text);
      expect(body.code).toBe("INTERNAL");
      expect(body.requestId).toBe(response.headers.get("x-request-id"));
      expect(response.text).not.toMatch(/postgres|no_such_database|select|from "clients"|\.ts:\d+/i);
    },
  );

  it.skipIf(inject("embeddedDatabase"))(
    "a database that refuses connections (SQLSTATE 55000) is a 503 with Retry-After, logged with its SQLSTATE and no SQL",
    async () => {
      const name = `refusing_${crypto.randomUUID().replace(/-/g, "")}`;
      await database.db.execute(sql.raw(`CREATE DATABASE ${name}`));
      await database.db.execute(sql.raw(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`));
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const url = new URL(env.DATABASE_URL);
        url.pathname = `/${name}`;
        const response = await callWithBindings(
          `/insights/${tenant.projectId}/metrics`,
          { DATABASE_URL: url.toString() },
          { headers: credentialHeaders({ id: crypto.randomUUID(), secret: "s", type: "read" }) },
        );
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toBe("5");
        expect(JSON.parse(response.text).code).toBe("DATABASE_UNAVAILABLE");
        const lines = warn.mock.calls.map((args) => String(args[0]));
        const line = lines.find((text) => text.includes('"sqlstate":"55000"'));
        expect(line, lines.join("\n")).toBeDefined();
        expect(JSON.parse(line ?? "{}")).toMatchObject({
          event: "database_unavailable",
          sqlstate: "55000",
          status: 503,
          method: "GET",
          route: "/insights/:projectId/*",
          requestId: response.headers.get("x-request-id"),
        });
        expect(line).not.toMatch(/select|"clients"|postgres:|refusing_/i);
      } finally {
        warn.mockRestore();
        await database.db.execute(sql.raw(`DROP DATABASE ${name}`));
      }
    },
  );
});

describe("request ids", () => {
  it("are on every response, success or error, and echo a sane incoming id", async () => {
    const responses = [
      await call("/health"),
      await call("/nope"),
      await call("/openapi.json"),
      await call(`/insights/${tenant.projectId}/live`),
      await call("/health", { method: "DELETE" }),
    ];
    for (const response of responses) expect(response.headers.get("x-request-id")).toMatch(/^[\w-]{8,}$/);
    const echoed = await call("/health", { headers: { "X-Request-Id": "trace-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123");
  });
});

describe("unknown paths and methods", () => {
  it("404 NOT_FOUND as problem+json", async () => {
    expectProblem(await call("/no/such/endpoint"), 404, "NOT_FOUND");
  });

  it("405 with Allow for writes anywhere, 204 for a CORS preflight", async () => {
    const response = await call("/health", { method: "POST" });
    expectProblem(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    const preflight = await call(`/insights/${tenant.projectId}/live`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "openpanel-client-id, openpanel-client-secret",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("openpanel-client-secret");
  });
});

describe("CORS", () => {
  it("exposes the headers browser apps need", async () => {
    const response = await call(`/insights/${tenant.projectId}/live`, {
      headers: { Origin: "https://app.example", ...credentialHeaders(tenant.read) },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("timing-allow-origin")).toBe("*");
    const exposed = (response.headers.get("access-control-expose-headers") ?? "").split(/,\s*/);
    for (const header of [
      "Link",
      "X-Next-Cursor",
      "X-Request-Id",
      "ETag",
      "Cache-Status",
      "RateLimit-Remaining",
      "RateLimit",
      "RateLimit-Policy",
      "Server-Timing",
    ]) {
      expect(exposed).toContain(header);
    }
  });

  it("only allows the configured origins when CORS_ORIGINS is a list", async () => {
    const bindings = { CORS_ORIGINS: "https://a.example, https://b.example" };
    const allowed = await callWithBindings("/health", bindings, { headers: { Origin: "https://b.example" } });
    const refused = await callWithBindings("/health", bindings, {
      headers: { Origin: "https://evil.example" },
    });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://b.example");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("GET /openapi.json and /docs", () => {
  it("names every operation for generated clients: camelCase, unique, by what it does", async () => {
    const response = await call<{ paths: Record<string, { get: { operationId?: string } }> }>(
      "/openapi.json",
    );
    const ids = Object.fromEntries(
      Object.entries(response.body.paths).map(([path, item]) => [path, item.get.operationId]),
    );
    expect(ids).toEqual({
      "/docs/errors": "getErrorReference",
      "/export/charts": "exportCharts",
      "/export/events": "exportEvents",
      "/health": "getHealth",
      "/insights/{projectId}/active_users": "getActiveUsers",
      "/insights/{projectId}/engagement": "getEngagement",
      "/insights/{projectId}/events": "listEvents",
      "/insights/{projectId}/events/names": "listEventNames",
      "/insights/{projectId}/events/properties": "listEventProperties",
      "/insights/{projectId}/events/property_values": "listPropertyValues",
      "/insights/{projectId}/funnel": "getFunnel",
      "/insights/{projectId}/groups": "listGroups",
      "/insights/{projectId}/groups/{groupId}": "getGroup",
      "/insights/{projectId}/live": "getLive",
      "/insights/{projectId}/metrics": "getMetrics",
      "/insights/{projectId}/overview": "getOverview",
      "/insights/{projectId}/pages": "listPages",
      "/insights/{projectId}/pages/entry_exit": "listEntryExitPages",
      "/insights/{projectId}/pages/performance": "listPagePerformance",
      "/insights/{projectId}/pages/top": "listTopPages",
      "/insights/{projectId}/profiles": "listProfiles",
      "/insights/{projectId}/profiles/{profileId}": "getProfile",
      "/insights/{projectId}/profiles/{profileId}/metrics": "getProfileMetrics",
      "/insights/{projectId}/profiles/{profileId}/sessions": "listProfileSessions",
      "/insights/{projectId}/reports/{reportId}/data": "getReportData",
      "/insights/{projectId}/retention": "getWeeklyRetention",
      "/insights/{projectId}/retention/cohort": "getRetentionCohorts",
      "/insights/{projectId}/sessions": "listSessions",
      "/insights/{projectId}/traffic/devices": "listDevices",
      "/insights/{projectId}/traffic/geo": "listGeo",
      "/insights/{projectId}/traffic/referrers": "listReferrers",
      "/insights/{projectId}/user_flow": "getUserFlow",
      "/insights/{projectId}/{dimension}": "listBreakdown",
    });
  });

  it("documents every route with its parameters, security and problem responses", async () => {
    const response = await call<{
      openapi: string;
      paths: Record<string, { get: { parameters?: Array<{ name: string; in: string }>; responses: object } }>;
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
    }>("/openapi.json");
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths).sort()).toEqual([
      "/docs/errors",
      "/export/charts",
      "/export/events",
      "/health",
      "/insights/{projectId}/active_users",
      "/insights/{projectId}/engagement",
      "/insights/{projectId}/events",
      "/insights/{projectId}/events/names",
      "/insights/{projectId}/events/properties",
      "/insights/{projectId}/events/property_values",
      "/insights/{projectId}/funnel",
      "/insights/{projectId}/groups",
      "/insights/{projectId}/groups/{groupId}",
      "/insights/{projectId}/live",
      "/insights/{projectId}/metrics",
      "/insights/{projectId}/overview",
      "/insights/{projectId}/pages",
      "/insights/{projectId}/pages/entry_exit",
      "/insights/{projectId}/pages/performance",
      "/insights/{projectId}/pages/top",
      "/insights/{projectId}/profiles",
      "/insights/{projectId}/profiles/{profileId}",
      "/insights/{projectId}/profiles/{profileId}/metrics",
      "/insights/{projectId}/profiles/{profileId}/sessions",
      "/insights/{projectId}/reports/{reportId}/data",
      "/insights/{projectId}/retention",
      "/insights/{projectId}/retention/cohort",
      "/insights/{projectId}/sessions",
      "/insights/{projectId}/traffic/devices",
      "/insights/{projectId}/traffic/geo",
      "/insights/{projectId}/traffic/referrers",
      "/insights/{projectId}/user_flow",
      "/insights/{projectId}/{dimension}",
    ]);
    const live = document.paths["/insights/{projectId}/live"]?.get;
    expect(live?.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual([
      "path:projectId",
      "query:minutes",
    ]);
    expect(Object.keys(live?.responses ?? {}).sort()).toEqual([
      "200",
      "304",
      "400",
      "401",
      "403",
      "404",
      "414",
      "429",
      "503",
    ]);
    expect(document.components.schemas).toHaveProperty("Problem");
    const pages = document.paths["/insights/{projectId}/pages"]?.get.responses as Record<
      string,
      { headers?: object }
    >;
    expect(Object.keys(pages["200"]?.headers ?? {})).toEqual(
      expect.arrayContaining(["Link", "X-Next-Cursor", "ETag", "Cache-Status", "X-Window-Start"]),
    );
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      "basic",
      "clientId",
      "clientSecret",
    ]);
  });

  it("serves the interactive reference with its pinned renderer, and names this server", async () => {
    const response = await call<string>("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.body).toContain("/openapi.json");
    // The renderer comes from this Worker's assets, never from a CDN.
    expect(response.body).toContain('<script src="/docs/scalar-api-reference.js"></script>');
    expect(response.body).not.toMatch(/https?:\/\/[^"']*(jsdelivr|unpkg|scalar\.com)/);
    const document = await call<{ servers: unknown; info: { license?: { name: string }; version: string } }>(
      "/openapi.json",
    );
    // The origin the document was fetched from (the tests call http://api.test).
    expect(document.body.servers).toEqual([{ url: "http://api.test" }]);
    expect(document.body.info.license).toEqual({ name: "UNLICENSED" });
    expect(document.body.info.version).toBe(packageJson.version);
  });

  it("types whole-number and true/false parameters as integer and boolean", async () => {
    type Parameter = { name: string; schema?: Record<string, unknown> };
    const response = await call<{ paths: Record<string, { get: { parameters?: Parameter[] } }> }>(
      "/openapi.json",
    );
    const schemaOf = (path: string, name: string) =>
      response.body.paths[path]?.get.parameters?.find((parameter) => parameter.name === name)?.schema;
    expect(schemaOf("/insights/{projectId}/pages", "limit")).toEqual({
      type: "integer",
      minimum: 1,
      maximum: 1000,
      default: 10,
    });
    expect(schemaOf("/insights/{projectId}/live", "minutes")).toEqual({
      type: "integer",
      minimum: 1,
      maximum: 60,
      default: 5,
    });
    expect(schemaOf("/insights/{projectId}/metrics", "previous")).toEqual({
      type: "boolean",
      default: false,
    });
    expect(schemaOf("/insights/{projectId}/profiles", "identified")).toEqual({ type: "boolean" });
    // A required list parameter keeps its schema (it was blank before).
    expect(schemaOf("/insights/{projectId}/funnel", "steps")).toEqual({
      anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
    });
    // No parameter is left as text with a digits pattern or a true/false enum.
    for (const item of Object.values(response.body.paths)) {
      for (const parameter of item.get.parameters ?? []) {
        expect(parameter.schema?.pattern, parameter.name).not.toBe("^\\d+$");
        expect(parameter.schema?.enum, parameter.name).not.toEqual(["true", "false"]);
      }
    }
  });
});

describe("GET /docs/errors: every problem type resolves", () => {
  it("has an entry, by anchor, for every error code", async () => {
    const page = await call<string>("/docs/errors");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    for (const [code, { status, title }] of Object.entries(ERROR_CODES)) {
      const anchor = problemType(code as ErrorCode).split("#")[1];
      expect(page.body, code).toContain(`<section id="${anchor}">`);
      expect(page.body, code).toContain(`<h2>${status} ${title} <code>${code}</code></h2>`);
    }
  });

  it("is where a real problem's type points", async () => {
    const problem = await call<{ type: string; code: string }>("/insights/x/metrics");
    expect(problem.status).toBe(401);
    expect(problem.body.type).toBe("/docs/errors#unauthenticated");
    const [pathPart, anchor] = problem.body.type.split("#");
    const page = await call<string>(pathPart ?? "");
    expect(page.body).toContain(`id="${anchor}"`);
  });
});

describe("GET /dashboard/demo-client", () => {
  it("is a plain 404 unless the Worker is given a demo client (only npm run dev does)", async () => {
    const response = await call<{ code: string; detail: string }>("/dashboard/demo-client");
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("NOT_FOUND");
    expect(response.body.detail).toBe("No endpoint at /dashboard/demo-client.");
  });

  it("hands out the configured read client, uncached", async () => {
    const demo = { clientId: "c1", clientSecret: "s1", projectId: "p1" };
    const response = await callWithBindings("/dashboard/demo-client", {
      DASHBOARD_DEMO_CLIENT: JSON.stringify(demo),
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual(demo);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const broken = await callWithBindings("/dashboard/demo-client", { DASHBOARD_DEMO_CLIENT: "{not json" });
    expect(broken.status).toBe(404);
  });
});
