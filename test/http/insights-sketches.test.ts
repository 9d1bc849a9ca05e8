import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, credentialHeaders, type Tenant } from "../support/factories";
import { call, testDatabase } from "../support/worker/http";
import { ROLLUPS_ON } from "../support/worker/query-path";

/**
 * Unique visitors of a large window: from the visitor sketches on the rollup path (flagged in
 * meta.approximate, within ±2 %), counted exactly on the exact path (http-exact) and wherever the
 * rollups do not cover the request. 25,000 sessions of 20,000 visitors over two UTC days.
 */

const database = testDatabase();
let tenant: Tenant;

const SESSIONS = 25_000;
const VISITORS = 20_000;
const START = Date.parse("2026-05-01T00:00:00Z");
const MINUTE = 60_000;

/** Session i starts at START + (i mod 2880) minutes; its visitor is v-(i mod 20000). */
const startOf = (i: number) => START + (i % 2880) * MINUTE;
const visitorOf = (i: number) => `v-${i % VISITORS}`;

/** Distinct visitors of the sessions starting in [from, to), counted here from the formula. */
function visitorsBetween(from: number, to: number): number {
  const seen = new Set<string>();
  for (let i = 1; i <= SESSIONS; i++) {
    if (startOf(i) >= from && startOf(i) < to) seen.add(visitorOf(i));
  }
  return seen.size;
}

beforeAll(async () => {
  tenant = await createTenant(database.db);
  await database.db.execute(sql`
    insert into events (project_id, name, device_id, profile_id, session_id, created_at, path, country)
    select ${tenant.projectId}, 'screen_view', 'v-' || (i % ${VISITORS}), 'v-' || (i % ${VISITORS}), 's-' || i,
      ${new Date(START).toISOString()}::timestamptz + (i % 2880) * interval '1 minute', '/',
      case when i % 3 = 0 then 'NO' else 'SE' end
    from generate_series(1, ${SESSIONS}) as i`);
  await database.db.execute(sql`select refresh_derived()`);
});
afterAll(() => database.close());

interface MetricsBody {
  metrics: { unique_visitors: number; total_sessions: number };
  series: Array<{ unique_visitors: number; total_sessions: number }>;
  meta: { approximate: string[] };
}

const metrics = (query: string) =>
  call<MetricsBody>(`/insights/${tenant.projectId}/metrics?timezone=UTC&${query}`, {
    headers: { ...credentialHeaders(tenant.read), "Cache-Control": "no-cache" },
  });

const within2Percent = (value: number, truth: number) => Math.abs(value - truth) <= truth * 0.02;

describe("unique visitors of a large window", () => {
  it("two whole days: sketches on the rollup path, exact otherwise", async () => {
    const response = await metrics("startDate=2026-05-01&endDate=2026-05-02");
    expect(response.status).toBe(200);
    const { metrics: totals, series, meta } = response.body;
    expect(totals.total_sessions).toBe(SESSIONS);
    const dayOf = (i: number) => Math.floor((startOf(i) - START) / (1440 * MINUTE));
    const sessionsPerDay = [0, 0];
    for (let i = 1; i <= SESSIONS; i++) sessionsPerDay[dayOf(i)] = (sessionsPerDay[dayOf(i)] ?? 0) + 1;
    expect(series.map((point) => point.total_sessions)).toEqual(sessionsPerDay);
    const truth = [
      visitorsBetween(START, START + 2880 * MINUTE),
      visitorsBetween(START, START + 1440 * MINUTE),
      visitorsBetween(START + 1440 * MINUTE, START + 2880 * MINUTE),
    ];
    expect(truth[0]).toBe(VISITORS);
    const answers = [totals.unique_visitors, ...series.map((point) => point.unique_visitors)];
    if (ROLLUPS_ON) {
      expect(meta.approximate).toEqual(["unique_visitors"]);
      answers.forEach((value, index) => {
        expect({ index, within: within2Percent(value, truth[index] ?? 0) }).toEqual({ index, within: true });
      });
    } else {
      expect(meta.approximate).toEqual([]);
      expect(answers).toEqual(truth);
    }
  });

  it("a window that is not whole hours is answered exactly on both paths", async () => {
    const response = await metrics("startDate=2026-05-01 00:30:00&endDate=2026-05-02 23:59:59");
    expect(response.status).toBe(200);
    expect(response.body.meta.approximate).toEqual([]);
    expect(response.body.metrics.unique_visitors).toBe(
      visitorsBetween(START + 30 * MINUTE, START + 2880 * MINUTE),
    );
  });

  it("a filter on a session attribute: the sketches of its values on the rollup path, exact otherwise", async () => {
    const filters = encodeURIComponent(JSON.stringify([{ name: "country", operator: "is", value: ["NO"] }]));
    const response = await metrics(`startDate=2026-05-01&endDate=2026-05-02&filters=${filters}`);
    expect(response.status).toBe(200);
    // Sessions i with i mod 3 = 0 are Norwegian; their visitors are v-(i mod 20000).
    const visitors = new Set<number>();
    let sessions = 0;
    for (let i = 1; i <= SESSIONS; i++) {
      if (i % 3 !== 0) continue;
      sessions++;
      visitors.add(i % VISITORS);
    }
    const { metrics: totals, meta } = response.body;
    expect(totals.total_sessions).toBe(sessions);
    if (ROLLUPS_ON) {
      expect(meta.approximate).toEqual(["unique_visitors"]);
      expect(within2Percent(totals.unique_visitors, visitors.size)).toBe(true);
    } else {
      expect(meta.approximate).toEqual([]);
      expect(totals.unique_visitors).toBe(visitors.size);
    }
  });

  it("a filter on one path: the sketches of the path on the rollup path, exact otherwise", async () => {
    const filters = encodeURIComponent(JSON.stringify([{ name: "path", operator: "is", value: ["/"] }]));
    const response = await metrics(`startDate=2026-05-01&endDate=2026-05-02&filters=${filters}`);
    expect(response.status).toBe(200);
    // Every session is on "/": all of them, and every visitor.
    const { metrics: totals, meta } = response.body;
    expect(totals.total_sessions).toBe(SESSIONS);
    expect(meta.approximate).toEqual(ROLLUPS_ON ? ["unique_visitors"] : []);
    if (ROLLUPS_ON) expect(within2Percent(totals.unique_visitors, VISITORS)).toBe(true);
    else expect(totals.unique_visitors).toBe(VISITORS);
  });

  it("a filter on an event field the rollups do not keep is answered exactly on both paths", async () => {
    // Two paths: a session on both would count twice in the rows of the paths.
    const filters = encodeURIComponent(
      JSON.stringify([{ name: "path", operator: "is", value: ["/", "/elsewhere"] }]),
    );
    const response = await metrics(`startDate=2026-05-01&endDate=2026-05-02&filters=${filters}`);
    expect(response.status).toBe(200);
    expect(response.body.meta.approximate).toEqual([]);
    expect(response.body.metrics.total_sessions).toBe(SESSIONS);
    expect(response.body.metrics.unique_visitors).toBe(VISITORS);
  });
});
