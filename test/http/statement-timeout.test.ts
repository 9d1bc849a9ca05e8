import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, credentialHeaders, type Tenant } from "../support/factories";
import { call, expectProblem, testDatabase } from "../support/worker/http";

/**
 * Runs in the `http-timeout` project, whose Worker cancels statements after 150 ms: a query over
 * many events with a regular-expression filter on an event field (the exact path, no index can
 * help) outlasts it and must answer 503 QUERY_TIMEOUT, while cheap requests still succeed. The
 * expression holds a back-reference over a long run of one letter in every path, which Postgres
 * matches by backtracking (the run is odd, so every split is tried), and the query outlasts the
 * timeout on a fast machine too (a plain expression over 200,000 short paths took under 150 ms
 * on one).
 */

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
  await database.db.execute(sql`
    insert into events (project_id, name, device_id, profile_id, session_id, created_at, path)
    select ${tenant.projectId}, 'screen_view', 'v-' || (i % 20000), 'v-' || (i % 20000), 's-' || (i / 4),
      '2026-05-01T00:00:00Z'::timestamptz + (i % 2880) * interval '1 minute', '/page-' || (i % 97) || '/' || repeat('a', 301) || 'x'
    from generate_series(1, 200000) as i`);
  await database.db.execute(sql`select refresh_derived()`);
  // Statistics as autovacuum would have them, so the cheap query below gets its index plan.
  await database.db.execute(sql`analyze events`);
  // Deriving 50,000 sessions of long paths took 49 s alone on a busy machine: beside the other
  // test files, it can need more than the project's two minutes.
}, 300_000);
afterAll(() => database.close());

describe("statement timeout", () => {
  it("the Worker under test runs with a 150 ms statement timeout", () => {
    expect(env.STATEMENT_TIMEOUT_MS).toBe("150");
  });

  it("a heavy uncovered query answers 503 QUERY_TIMEOUT with Retry-After", async () => {
    const filters = encodeURIComponent(
      JSON.stringify([
        { name: "path", operator: "regex", value: ["^/page-(1|2|3)[0-9]*/(a*)\\2x$"] },
        // Alone, the regex is answered from the bit strings, run once per distinct path; beside a
        // property filter, which no pre-aggregate answers, it runs on every page row of the window.
        { name: "properties.plan", operator: "isNull" },
      ]),
    );
    const response = await call(
      `/insights/${tenant.projectId}/metrics?startDate=2026-05-01&endDate=2026-05-02&timezone=UTC&filters=${filters}`,
      { headers: { ...credentialHeaders(tenant.read), "Cache-Control": "no-cache" } },
    );
    expectProblem(response, 503, "QUERY_TIMEOUT");
    expect(response.headers.get("retry-after")).toBe("5");
    expect(JSON.stringify(response.body)).not.toMatch(/statement|cancel|select/i);
  });

  it("cheap requests are unaffected", async () => {
    const response = await call(`/insights/${tenant.projectId}/live`, {
      headers: credentialHeaders(tenant.read),
    });
    expect(response.body).toEqual({ visitors: 0 });
    expect(response.status).toBe(200);
  });
});
