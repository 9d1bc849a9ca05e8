import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { derivedState, eventRollups } from "../../src/db/schema";
import {
  createTenant,
  type EventInput,
  insertEvents,
  type Tenant,
  type TestClient,
} from "../support/factories";
import {
  exportEvents,
  exportOrder,
  ids,
  type PageBody,
  ownProject as projectOf,
} from "../support/worker/export-events";
import { testDatabase } from "../support/worker/http";

/**
 * The totals of an export page (`meta.totalCount`, `pages`, `current`) are read from the hourly
 * event rollups plus the partial first and last hour and the events not rolled up yet
 * (src/queries/export/event-counts.ts). They must equal a count of the inserted events for windows
 * that cut hours, names, cursor positions inside a millisecond shared by several events, and
 * events that arrived after the last refresh.
 */

const database = testDatabase();
let tenant: Tenant;
let projectId: string;
let client: TestClient;
const inserted: Array<EventInput & { id: string; name: string }> = [];
const HOUR = 3_600_000;
const base = Date.parse("2026-03-02T00:00:00.000Z");

/** Events every 7 minutes 13 s over 30 hours, three names, ten of them at one shared millisecond. */
function batch(offset: number, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    return {
      id: crypto.randomUUID(),
      projectId,
      sessionId: `s-${n % 23}`,
      name: ["screen_view", "purchase", "signup"][n % 3] as string,
      createdAt: new Date(n % 40 === 0 ? base + 10 * HOUR + 1_234 : base + n * 433_000),
    };
  });
}

beforeAll(async () => {
  tenant = await createTenant(database.db);
  ({ projectId, client } = await projectOf(database, tenant));
  const rolledUp = batch(0, 250);
  inserted.push(...rolledUp);
  await insertEvents(database.db, rolledUp);
  // Arrived after the last refresh: above the rollups' watermark, spread over the same hours.
  const fresh = batch(250, 60).map((event, i) => ({
    ...event,
    createdAt: new Date(base + 30 * HOUR - i * 1_777_000),
  }));
  inserted.push(...fresh);
  await insertEvents(database.db, fresh, { refresh: false });
});
afterAll(() => database.close());

/** The expected export order of the events in [start, end] (inclusive end, as `end` is) with one of `names`. */
const selected = (start: number, end: number, names: string[] = []) =>
  ids(
    exportOrder(
      inserted.filter(
        (event) =>
          event.createdAt.getTime() >= start &&
          event.createdAt.getTime() <= end &&
          (names.length === 0 || names.includes(event.name)),
      ),
    ),
  );

describe("export totals from the rollups", () => {
  it("are built on rolled-up hours: the rollups hold this project's events and some are above the watermark", async () => {
    const [rows] = (
      await database.db.execute<{ events: string }>(
        sql`select coalesce(sum(${eventRollups.events}), 0) as events from ${eventRollups}
          where ${eventRollups.projectId} = ${projectId} and ${eventRollups.dimension} = ''`,
      )
    ).rows;
    expect(Number(rows?.events)).toBe(250);
    const [state] = await database.db
      .select()
      .from(derivedState)
      .where(eq(derivedState.name, "event_rollups"));
    expect(state?.processedXid).toBeGreaterThan(0);
  });

  it.each([
    ["whole history", undefined, undefined, []],
    ["a window cutting its first and last hour", "2026-03-02T03:17:00.000Z", "2026-03-03T02:41:59.999Z", []],
    ["a window inside one hour", "2026-03-02T10:00:01.000Z", "2026-03-02T10:59:00.000Z", []],
    ["one name", "2026-03-02T01:30:00.000Z", "2026-03-02T21:10:00.000Z", ["purchase"]],
    ["two names", undefined, undefined, ["signup", "purchase"]],
  ])("page mode over %s: totalCount, pages and current", async (_label, start, end, names) => {
    const expected = selected(start ? Date.parse(start) : -Infinity, end ? Date.parse(end) : Infinity, names);
    expect(expected.length).toBeGreaterThan(0);
    const params = { start, end, event: names.length ? names : undefined, limit: "7" };
    const second = await exportEvents<PageBody>(client, { ...params, page: "2" });
    expect(second.status).toBe(200);
    expect(second.body.meta).toMatchObject({
      totalCount: expected.length,
      pages: Math.ceil(expected.length / 7),
      current: 2,
    });
    expect(ids(second.body.data)).toEqual(expected.slice(7, 14));
  });

  it("totalCount=true on cursor pages counts the pages passed, across a shared millisecond", async () => {
    const start = "2026-03-02T02:05:00.000Z";
    const expected = selected(Date.parse(start), Infinity);
    let cursor: string | undefined;
    for (let page = 1; page <= Math.ceil(expected.length / 9); page++) {
      const response = await exportEvents<PageBody>(client, {
        start,
        end: "2026-03-09",
        limit: "9",
        totalCount: "true",
        cursor,
      });
      expect(response.body.meta).toMatchObject({ totalCount: expected.length, current: page });
      expect(ids(response.body.data)).toEqual(expected.slice((page - 1) * 9, page * 9));
      cursor = response.body.meta.next ?? undefined;
    }
    expect(cursor).toBeUndefined();
  });
});
