import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { derivedState, entryExitDayRollups, entryExitRollups, projects } from "../../src/db/schema";
import { startOfLocalDay } from "../../src/lib/timezone";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { testDatabase } from "../support/node/database";
import { buildSessions, type RawEvent } from "../support/reference";
import { generateTraffic, shuffled } from "../support/traffic";

/**
 * The entry and exit pages per hour and per project day (src/db/routines/refresh_entry_exit_rollups.sql)
 * are maintained by difference: whatever the batches the events arrive in (a late earlier event
 * changes a session's entry page, its hour or its day), a timezone change or a first build over
 * stored sessions, they must hold what the raw events give, computed here.
 */

const database = testDatabase();
afterAll(() => database.close());

const HOUR = 3_600_000;
const FROM = Date.UTC(2026, 6, 6);
const TO = FROM + 3 * 24 * HOUR;
let organizationId: string;

beforeAll(async () => {
  organizationId = await createOrganization(database.db);
});

const traffic = (projectId: string, seed = 61) =>
  generateTraffic({ projectId, seed, sessions: 220, from: FROM, to: TO }) as Array<RawEvent & EventInput>;

type Sums = { sessions: number; bounces: number; screenViews: number; revenue: number };

/** The rows of every unit (an hour, or a local day) as the raw events' sessions give them. */
function expected(events: RawEvent[], projectId: string, unitOf: (instant: number) => number) {
  const rows = new Map<string, Sums>();
  for (const session of buildSessions(events, projectId)) {
    const views = session.events.filter((event) => event.name === "screen_view");
    if (views.length === 0) continue;
    const pages: Array<[string, RawEvent]> = [
      ["entry", views[0] as RawEvent],
      ["exit", views.at(-1) as RawEvent],
    ];
    for (const [mode, view] of pages) {
      const key = JSON.stringify([mode, unitOf(session.start), view.origin, view.path]);
      const sums = rows.get(key) ?? { sessions: 0, bounces: 0, screenViews: 0, revenue: 0 };
      sums.sessions += 1;
      sums.bounces += session.bounce ? 1 : 0;
      sums.screenViews += views.length;
      sums.revenue += session.revenue;
      rows.set(key, sums);
    }
  }
  return rows;
}

async function stored(projectId: string) {
  const sums = (row: Sums) => ({
    sessions: row.sessions,
    bounces: row.bounces,
    screenViews: row.screenViews,
    revenue: row.revenue,
  });
  const hours = await database.db
    .select()
    .from(entryExitRollups)
    .where(eq(entryExitRollups.projectId, projectId));
  const days = await database.db
    .select()
    .from(entryExitDayRollups)
    .where(eq(entryExitDayRollups.projectId, projectId));
  return {
    hours: new Map(
      hours.map((row) => [JSON.stringify([row.mode, row.hour.getTime(), row.origin, row.path]), sums(row)]),
    ),
    days: new Map(
      days.map((row) => [JSON.stringify([row.mode, row.day.getTime(), row.origin, row.path]), sums(row)]),
    ),
  };
}

async function expectExact(events: RawEvent[], projectId: string, timezone: string) {
  const hours = expected(events, projectId, (instant) => Math.floor(instant / HOUR) * HOUR);
  expect(hours.size).toBeGreaterThan(100);
  expect(await stored(projectId)).toEqual({
    hours,
    days: expected(events, projectId, (instant) => startOfLocalDay(instant, timezone)),
  });
}

describe("entry and exit rollups", () => {
  it("hold every session's entry and exit page per hour and day, in one batch or shuffled small ones", async () => {
    const batch = await createProject(database.db, organizationId);
    const events = traffic(batch);
    await insertEvents(database.db, events);
    await expectExact(events, batch, "UTC");
    const trickle = await createProject(database.db, organizationId, { timezone: "Asia/Kolkata" });
    const trickled = shuffled(traffic(trickle), 3);
    for (let i = 0; i < trickled.length; i += 90) await insertEvents(database.db, trickled.slice(i, i + 90));
    await expectExact(trickled, trickle, "Asia/Kolkata");
  });

  it("rebuild a project's days when its timezone changes", async () => {
    const id = await createProject(database.db, organizationId, { timezone: "America/New_York" });
    const events = traffic(id, 62);
    await insertEvents(database.db, events);
    await database.db.update(projects).set({ timezone: "Pacific/Chatham" }).where(eq(projects.id, id));
    await insertEvents(database.db, []);
    await expectExact(events, id, "Pacific/Chatham");
  });

  it("are built from the stored sessions on the first run after they were added", async () => {
    const id = await createProject(database.db, organizationId);
    const events = traffic(id, 63);
    await insertEvents(database.db, events);
    await database.db.delete(derivedState).where(eq(derivedState.name, "entry_exit"));
    await database.db.execute(sql`truncate entry_exit_rollups, entry_exit_day_rollups`);
    await database.db.execute(sql`select refresh_derived()`);
    await expectExact(events, id, "UTC");
  });
});
