import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, projects } from "../../src/db/schema";
import { startOfLocalDay } from "../../src/lib/timezone";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { testDatabase } from "../support/node/database";
import {
  expectedDimensionPages,
  expectedPageUnits,
  expectedPairs,
  expectedSessionUnits,
  HOURS,
  keyOf,
  storedDimensionPages,
  storedPageUnits,
  storedPairs,
  storedSessionUnits,
} from "../support/node/rollup-sums";
import {
  dayNumberProblems,
  expectedBitStrings,
  expectedPageStrings,
  expectedVisitorSets,
  storedBitStrings,
  storedDayNumbers,
  storedPageStrings,
  storedVisitorSets,
} from "../support/node/session-bits";
import { estimatedDayVisitors, storedSketches } from "../support/node/sketches";
import { generateTraffic, shuffled } from "../support/traffic";

/**
 * The session aggregates per day and pair of dimension values (src/db/routines/refresh_pair_rollups.sql),
 * the page aggregates per day and dimension value (refresh_page_dimension_rollups.sql) and the
 * session and page rollups per hour and day (refresh_rollups.sql) are maintained by difference: whatever the order and the batches the events arrive in, and whatever
 * late events change, they must hold exactly the sums counted here from the sessions and their pages.
 */

const database = testDatabase();
afterAll(() => database.close());

const HOUR = 3_600_000;
const FROM = Date.UTC(2026, 7, 3);
const TO = FROM + 4 * 24 * HOUR;
let organizationId: string;

beforeAll(async () => {
  organizationId = await createOrganization(database.db);
});

async function project(timezone: string | null = null): Promise<string> {
  const id = await createProject(database.db, organizationId, { timezone });
  return id;
}

function traffic(projectId: string): EventInput[] {
  return generateTraffic({ projectId, seed: 47, sessions: 300, from: FROM, to: TO }) as EventInput[];
}

/**
 * Every table kept by difference holds what a project's sessions and pages give, in its timezone:
 * the pairs, the pages per value, the session and page rows per hour and per local day, and the
 * bit strings per local day.
 */
async function expectExact(projectId: string, timezone = "UTC"): Promise<void> {
  expect(await storedPairs(database.db, projectId)).toEqual(
    await expectedPairs(database.db, projectId, timezone),
  );
  const pages = await expectedDimensionPages(database.db, projectId, timezone);
  expect(pages.size).toBeGreaterThan(0);
  expect(await storedDimensionPages(database.db, projectId)).toEqual(pages);
  const localDay = (instant: number) => startOfLocalDay(instant, timezone);
  expect(await storedSessionUnits(database.db, projectId)).toEqual({
    hours: await expectedSessionUnits(database.db, projectId, HOURS),
    days: await expectedSessionUnits(database.db, projectId, localDay),
  });
  expect(await storedPageUnits(database.db, projectId)).toEqual({
    hours: await expectedPageUnits(database.db, projectId, HOURS),
    days: await expectedPageUnits(database.db, projectId, localDay),
  });
  // The bit strings per day over sessions, over the numbers each session keeps in its day.
  expect(await dayNumberProblems(database.db, projectId, timezone)).toEqual([]);
  const bits = await expectedBitStrings(database.db, projectId, timezone);
  expect(bits.values.size).toBeGreaterThan(0);
  expect(await storedBitStrings(database.db, projectId)).toEqual(bits);
  expect(await storedVisitorSets(database.db, projectId)).toEqual(
    await expectedVisitorSets(database.db, projectId, timezone),
  );
  const pageBits = await expectedPageStrings(database.db, projectId, timezone);
  expect(pageBits.slices.size).toBeGreaterThan(0);
  expect(await storedPageStrings(database.db, projectId)).toEqual(pageBits);
}

/** The stored session strings of a project as the session ids each one sets, by day and value. */
async function sessionSets(projectId: string): Promise<Map<string, string[]>> {
  const { ordinalOf, blockBits } = await storedDayNumbers(database.db, projectId);
  const sessionAt = new Map([...ordinalOf].map(([id, { day, ordinal }]) => [keyOf([day, ordinal]), id]));
  const sets = new Map<string, string[]>();
  for (const [key, bits] of (await storedBitStrings(database.db, projectId)).values) {
    const [day, block, ...value] = JSON.parse(key) as [number, number, ...Array<string | null>];
    const ids = [...bits].flatMap((bit, offset) =>
      bit === "1" ? [sessionAt.get(keyOf([day, block * blockBits + offset])) ?? "?"] : [],
    );
    // A value's sessions of the day, from all its blocks.
    const dayKey = keyOf([day, ...value]);
    sets.set(dayKey, [...(sets.get(dayKey) ?? []), ...ids].sort());
  }
  return sets;
}

describe("rollups maintained by difference", () => {
  it("hold every pair of values and every page per value of every day, with their sums", async () => {
    const id = await project();
    await insertEvents(database.db, traffic(id));
    const expected = await expectedPairs(database.db, id, "UTC");
    expect(expected.size).toBeGreaterThan(5_000);
    await expectExact(id);
  });

  it("end up the same whether the events arrive in one batch or shuffled in small ones", async () => {
    const trickle = await project();
    const events = shuffled(traffic(trickle), 5);
    for (let i = 0; i < events.length; i += 150) await insertEvents(database.db, events.slice(i, i + 150));
    await expectExact(trickle);
  });

  it("cut days at the project's midnights, half-hour zones too, and merge the same visitor sketches", async () => {
    const kolkata = await project("Asia/Kolkata");
    const events = shuffled(traffic(kolkata), 9);
    for (let i = 0; i < events.length; i += 400) await insertEvents(database.db, events.slice(i, i + 400));
    await expectExact(kolkata, "Asia/Kolkata");
    // Sketches merged run by run (and rebuilt where a late event moved a session or changed its
    // visitor) equal those of the same traffic in one batch: the same visitors, the same registers.
    const batch = await project("Asia/Kolkata");
    await insertEvents(database.db, traffic(batch));
    const trickled = await storedSketches(database.db, kolkata);
    expect(trickled.hours.length).toBeGreaterThan(50);
    expect(trickled.days.length).toBeGreaterThan(4);
    expect(trickled).toEqual(await storedSketches(database.db, batch));
  });

  it("count a visitor first seen in a midnight hour that happens twice in the day sketch of its day", async () => {
    // Havana falls back from 01:00 to 00:00 on 2025-11-02: local midnight is 04:00 and 05:00 UTC,
    // and Postgres keys November 2 at 05:00, so a start at 04:30 UTC belongs to the day that
    // begins after it. A late event moving ben's session to November 1 rebuilds both days.
    const event = (projectId: string, sessionId: string, profileId: string, at: string): EventInput => ({
      projectId,
      sessionId,
      profileId,
      createdAt: new Date(at),
    });
    const first = (projectId: string) => [
      event(projectId, "a", "ana", "2025-11-02T04:30:00Z"),
      event(projectId, "b", "ben", "2025-11-02T12:00:00Z"),
      event(projectId, "c", "cy", "2025-11-01T15:00:00Z"),
    ];
    const late = (projectId: string) => [event(projectId, "b", "ben", "2025-11-01T20:00:00Z")];
    const trickled = await project("America/Havana");
    await insertEvents(database.db, first(trickled));
    await insertEvents(database.db, late(trickled));
    const batch = await project("America/Havana");
    await insertEvents(database.db, [...first(batch), ...late(batch)]);
    // A project moved into Havana has all of its days built again.
    const moved = await project();
    await insertEvents(database.db, [...first(moved), ...late(moved)]);
    await database.db.update(projects).set({ timezone: "America/Havana" }).where(eq(projects.id, moved));
    await database.db.execute(sql`select refresh_derived()`);
    const expected = new Map([
      ["2025-11-01T04:00:00.000Z", 2],
      ["2025-11-02T05:00:00.000Z", 1],
    ]);
    for (const id of [trickled, batch, moved]) {
      expect({ id, days: await estimatedDayVisitors(database.db, id) }).toEqual({ id, days: expected });
    }
    expect(await storedSketches(database.db, trickled)).toEqual(await storedSketches(database.db, batch));
    expect(await storedSketches(database.db, moved)).toEqual(await storedSketches(database.db, batch));
  });

  it("move a session to its new day and values when a late earlier event changes them, and drop emptied groups", async () => {
    const id = await project();
    const at = (hours: number) => new Date(FROM + hours * HOUR);
    await insertEvents(database.db, [
      {
        projectId: id,
        sessionId: "s1",
        profileId: "alice",
        createdAt: at(24.2),
        country: "SE",
        device: "mobile",
      },
      {
        projectId: id,
        sessionId: "s1",
        profileId: "alice",
        createdAt: at(24.3),
        country: "SE",
        device: "mobile",
      },
      {
        projectId: id,
        sessionId: "s2",
        profileId: "bob",
        createdAt: at(24.5),
        country: "SE",
        device: "desktop",
      },
    ]);
    await insertEvents(database.db, [
      {
        projectId: id,
        sessionId: "s1",
        profileId: "carol",
        createdAt: at(23.9),
        country: "NO",
        device: "tablet",
        revenue: 990,
      },
    ]);
    await expectExact(id);
    const stored = await storedPairs(database.db, id);
    // Sweden on the second day keeps Bob's desktop session alone; Norway's tablet moved a day back.
    const country = (day: number, name: string, device: string) =>
      stored.get(keyOf([FROM + day * 24 * HOUR, "country", name, null, "device", device, null]));
    expect(country(1, "SE", "mobile")).toBeUndefined();
    expect(country(1, "SE", "desktop")).toEqual({
      sessions: 1,
      bounces: 1,
      screenViews: 1,
      durationMs: 0,
      timedSessions: 0,
      revenue: 0,
    });
    expect(country(0, "NO", "tablet")).toEqual({
      sessions: 1,
      bounces: 0,
      screenViews: 3,
      durationMs: 0.4 * HOUR,
      timedSessions: 1,
      revenue: 990,
    });
  });

  it("keep each session's number in its day while later runs bring earlier sessions and more events", async () => {
    const id = await project();
    const all = traffic(id);
    const sessionIds = [...new Set(all.map((event) => event.sessionId))];
    const first = new Set(sessionIds.filter((_, index) => index % 2 === 0));
    // The first run: half the sessions, each without its last event.
    const lastEvent = new Map(all.map((event) => [event.sessionId, event]));
    const firstRun = all.filter(
      (event) => first.has(event.sessionId) && lastEvent.get(event.sessionId) !== event,
    );
    await insertEvents(database.db, firstRun);
    const before = (await storedDayNumbers(database.db, id)).ordinalOf;
    expect(before.size).toBe(new Set(firstRun.map((event) => event.sessionId)).size);
    // The second: the other half (many of them earlier in their day) and the last events.
    await insertEvents(
      database.db,
      all.filter((event) => !first.has(event.sessionId) || lastEvent.get(event.sessionId) === event),
    );
    const after = (await storedDayNumbers(database.db, id)).ordinalOf;
    expect(after.size).toBe(sessionIds.length);
    const highestBefore = new Map<number, number>();
    for (const { day, ordinal } of before.values())
      highestBefore.set(day, Math.max(ordinal, highestBefore.get(day) ?? -1));
    for (const [sessionId, number] of after) {
      if (before.has(sessionId)) expect(number).toEqual(before.get(sessionId));
      else expect(number.ordinal).toBeGreaterThan(highestBefore.get(number.day) ?? -1);
    }
    await expectExact(id);
  });

  it("keep a session started in a midnight hour that happens twice in the day its number is in", async () => {
    // Havana's clocks fall back from 01:00 to 00:00 on 2026-11-01: 04:30 UTC is 00:30 of its first
    // pass, a start before the day's midnight as Postgres resolves it (the later 00:00, 05:00 UTC).
    const havana = await project("America/Havana");
    const event = (sessionId: string, profileId: string, at: string): EventInput => ({
      projectId: havana,
      sessionId,
      profileId,
      createdAt: new Date(at),
      country: "CU",
    });
    await insertEvents(database.db, [
      event("g0", "gv1", "2026-10-31T15:00:00Z"),
      ...Array.from({ length: 12 }, (_, i) => event(`o${i}`, `other-${i}`, `2026-11-01T${10 + i}:00:00Z`)),
    ]);
    await insertEvents(database.db, [event("g1", "gv1", "2026-11-01T04:30:00Z")]);
    await insertEvents(database.db, [event("g0", "gv1", "2026-10-31T15:10:00Z")]);
    await insertEvents(database.db, [event("g1", "gv1", "2026-11-01T04:40:00Z")]);
    // The same events in one run: the strings hold the same sessions and visitors per value and day.
    const batch = await project("America/Havana");
    const rows = await database.db.select().from(events).where(eq(events.projectId, havana));
    await insertEvents(
      database.db,
      rows
        .map((row) => event(row.sessionId, row.profileId, row.createdAt.toISOString()))
        .map((input) => ({
          ...input,
          projectId: batch,
        })),
    );
    const decoded = await sessionSets(havana);
    expect(decoded.size).toBeGreaterThan(20);
    expect(decoded).toEqual(await sessionSets(batch));
    expect(await storedVisitorSets(database.db, havana)).toEqual(await storedVisitorSets(database.db, batch));
  });

  it("follow the project's timezone when it changes", async () => {
    const moved = await project();
    await insertEvents(database.db, traffic(moved));
    await database.db.update(projects).set({ timezone: "Asia/Tokyo" }).where(eq(projects.id, moved));
    await database.db.execute(sql`select refresh_derived()`);
    const expected = await expectedPairs(database.db, moved, "Asia/Tokyo");
    expect([...expected.keys()].some((key) => JSON.parse(key)[0] % (24 * HOUR) === 15 * HOUR)).toBe(true);
    await expectExact(moved, "Asia/Tokyo");
  });
});
