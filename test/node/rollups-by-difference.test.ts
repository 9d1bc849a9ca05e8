import { and, eq, gt, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  events,
  pageDayRollups,
  pageDimensionRollups,
  pageRollups,
  projects,
  sessionDayRollups,
  sessionPages,
  sessionPairRollups,
  sessionRollups,
  sessions,
} from "../../src/db/schema";
import { BREAKDOWN_DIMENSIONS, DIMENSION_PREFIXES } from "../../src/lib/dimensions";
import { startOfLocalDay } from "../../src/lib/timezone";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { testDatabase } from "../support/node/database";
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

type SessionRow = typeof sessions.$inferSelect;
type Sums = {
  sessions: number;
  bounces: number;
  screenViews: number;
  durationMs: number;
  timedSessions: number;
  revenue: number;
};

const dimensionValue = (session: SessionRow, dimension: string): string | null => {
  const value = (session as unknown as Record<string, string | null>)[camel(dimension)];
  return value === "" || value === undefined ? null : value;
};
const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

const keyOf = (parts: Array<string | number | null>) => JSON.stringify(parts);

/** The session sums of a stored rollup row. */
const sessionSums = (row: Sums): Sums => ({
  sessions: row.sessions,
  bounces: row.bounces,
  screenViews: row.screenViews,
  durationMs: row.durationMs,
  timedSessions: row.timedSessions,
  revenue: row.revenue,
});

/** Adds a session to the sums of its group `key`, as every session rollup sums it. */
function addSession(expected: Map<string, Sums>, key: string, session: SessionRow): void {
  const sums = expected.get(key) ?? {
    sessions: 0,
    bounces: 0,
    screenViews: 0,
    durationMs: 0,
    timedSessions: 0,
    revenue: 0,
  };
  sums.sessions += 1;
  sums.bounces += session.isBounce ? 1 : 0;
  sums.screenViews += session.screenViewCount;
  sums.durationMs += session.durationMs > 0 ? session.durationMs : 0;
  sums.timedSessions += session.durationMs > 0 ? 1 : 0;
  sums.revenue += session.revenue;
  expected.set(key, sums);
}

/**
 * Each session's values of the multi-valued dimensions, read from its raw events: its distinct
 * paths and event names (not empty) as ["path", path] and ["name", name].
 */
async function valuesOfSessions(projectId: string): Promise<Map<string, Array<[string, string]>>> {
  const rows = await database.db
    .selectDistinct({ sessionId: events.sessionId, path: events.path, name: events.name })
    .from(events)
    .where(eq(events.projectId, projectId));
  const paths = new Map<string, Set<string>>();
  const names = new Map<string, Set<string>>();
  const add = (of: Map<string, Set<string>>, sessionId: string, value: string) =>
    of.set(sessionId, (of.get(sessionId) ?? new Set()).add(value));
  for (const { sessionId, path, name } of rows) {
    if (path !== null && path !== "") add(paths, sessionId, path);
    if (name !== "") add(names, sessionId, name);
  }
  const values = new Map<string, Array<[string, string]>>();
  for (const sessionId of new Set([...paths.keys(), ...names.keys()])) {
    values.set(sessionId, [
      ...[...(paths.get(sessionId) ?? [])].map((path): [string, string] => ["path", path]),
      ...[...(names.get(sessionId) ?? [])].map((name): [string, string] => ["name", name]),
    ]);
  }
  return values;
}

/** The pair rows of a project as the sessions give them, summed here in TypeScript. */
async function expectedPairs(projectId: string, timezone: string): Promise<Map<string, Sums>> {
  const rows = await database.db.select().from(sessions).where(eq(sessions.projectId, projectId));
  const values = await valuesOfSessions(projectId);
  const expected = new Map<string, Sums>();
  for (const session of rows) {
    const day = startOfLocalDay(session.startedAt.getTime(), timezone);
    // The rows of the paths and names come first in their pairs, with every dimension.
    for (const [dimension, value] of values.get(session.id) ?? []) {
      for (const byDimension of BREAKDOWN_DIMENSIONS) {
        const prefix = DIMENSION_PREFIXES[byDimension];
        const key = keyOf([
          day,
          dimension,
          value,
          null,
          byDimension,
          dimensionValue(session, byDimension),
          prefix ? dimensionValue(session, prefix) : null,
        ]);
        addSession(expected, key, session);
      }
    }
    BREAKDOWN_DIMENSIONS.forEach((dimension, position) => {
      for (const byDimension of BREAKDOWN_DIMENSIONS.slice(position + 1)) {
        const prefixOf = (of: string) => {
          const prefix = DIMENSION_PREFIXES[of as keyof typeof DIMENSION_PREFIXES];
          return prefix ? dimensionValue(session, prefix) : null;
        };
        const key = keyOf([
          day,
          dimension,
          dimensionValue(session, dimension),
          prefixOf(dimension),
          byDimension,
          dimensionValue(session, byDimension),
          prefixOf(byDimension),
        ]);
        addSession(expected, key, session);
      }
    });
  }
  return expected;
}

/** The pair rows of a project as the table holds them. */
async function storedPairs(projectId: string): Promise<Map<string, Sums>> {
  const p = sessionPairRollups;
  const rows = await database.db.select().from(p).where(eq(p.projectId, projectId));
  return new Map(
    rows.map((row) => [
      keyOf([
        row.day.getTime(),
        row.dimension,
        row.name,
        row.prefix,
        row.byDimension,
        row.byName,
        row.byPrefix,
      ]),
      sessionSums(row),
    ]),
  );
}

type PageSums = {
  sessions: number;
  pageviews: number;
  bounces: number;
  durationMs: number;
  timedViews: number;
};

/** Adds a session page (its session's bounce included) to the sums of its group `key`. */
function addPage(expected: Map<string, PageSums>, key: string, page: typeof sessionPages.$inferSelect): void {
  const sums = expected.get(key) ?? { sessions: 0, pageviews: 0, bounces: 0, durationMs: 0, timedViews: 0 };
  sums.sessions += 1;
  sums.pageviews += page.views;
  sums.bounces += page.isBounce ? 1 : 0;
  sums.durationMs += page.durationMs;
  sums.timedViews += page.timedViews;
  expected.set(key, sums);
}

/** The page rows per day and dimension value of a project as its session pages give them, summed here. */
async function expectedDimensionPages(projectId: string, timezone: string): Promise<Map<string, PageSums>> {
  const rows = await database.db
    .select({ page: sessionPages, session: sessions })
    .from(sessionPages)
    .innerJoin(
      sessions,
      and(eq(sessions.projectId, sessionPages.projectId), eq(sessions.id, sessionPages.sessionId)),
    )
    .where(and(eq(sessionPages.projectId, projectId), gt(sessionPages.views, 0)));
  const values = await valuesOfSessions(projectId);
  const expected = new Map<string, PageSums>();
  for (const { page, session } of rows) {
    const day = startOfLocalDay(session.startedAt.getTime(), timezone);
    for (const [dimension, value] of values.get(session.id) ?? []) {
      addPage(expected, keyOf([day, dimension, value, page.origin, page.path, page.title]), page);
    }
    for (const dimension of BREAKDOWN_DIMENSIONS) {
      const key = keyOf([
        day,
        dimension,
        dimensionValue(session, dimension),
        page.origin,
        page.path,
        page.title,
      ]);
      addPage(expected, key, page);
    }
  }
  return expected;
}

/** The page rows per day and dimension value of a project as the table holds them. */
async function storedDimensionPages(projectId: string): Promise<Map<string, PageSums>> {
  const r = pageDimensionRollups;
  const rows = await database.db.select().from(r).where(eq(r.projectId, projectId));
  return new Map(
    rows.map((row) => [
      keyOf([row.day.getTime(), row.dimension, row.name, row.origin, row.path, row.title]),
      {
        sessions: row.sessions,
        pageviews: row.pageviews,
        bounces: row.bounces,
        durationMs: row.durationMs,
        timedViews: row.timedViews,
      },
    ]),
  );
}

const HOURS = (instant: number) => Math.floor(instant / HOUR) * HOUR;

/** The session rows per hour or local day of a project (all sessions, each dimension value, each path and event name), summed here. */
async function expectedSessionUnits(projectId: string, unitOf: (instant: number) => number) {
  const rows = await database.db.select().from(sessions).where(eq(sessions.projectId, projectId));
  const values = await valuesOfSessions(projectId);
  const expected = new Map<string, Sums>();
  for (const session of rows) {
    const unit = unitOf(session.startedAt.getTime());
    const prefixOf = (dimension: string) => {
      const prefix = DIMENSION_PREFIXES[dimension as keyof typeof DIMENSION_PREFIXES];
      return prefix ? dimensionValue(session, prefix) : null;
    };
    const groups = [
      keyOf([unit, "", null, null]),
      ...BREAKDOWN_DIMENSIONS.map((d) => keyOf([unit, d, dimensionValue(session, d), prefixOf(d)])),
      ...(values.get(session.id) ?? []).map(([dimension, value]) => keyOf([unit, dimension, value, null])),
    ];
    for (const key of groups) addSession(expected, key, session);
  }
  return expected;
}

/** The session rows per hour and per day of a project as the tables hold them. */
async function storedSessionUnits(projectId: string) {
  const stored = (
    unit: Date,
    row: typeof sessionRollups.$inferSelect | typeof sessionDayRollups.$inferSelect,
  ) => [keyOf([unit.getTime(), row.dimension, row.name, row.prefix]), sessionSums(row)] as const;
  const hours = await database.db
    .select()
    .from(sessionRollups)
    .where(eq(sessionRollups.projectId, projectId));
  const days = await database.db
    .select()
    .from(sessionDayRollups)
    .where(eq(sessionDayRollups.projectId, projectId));
  return {
    hours: new Map(hours.map((row) => stored(row.hour, row))),
    days: new Map(days.map((row) => stored(row.day, row))),
  };
}

/** The page rows per hour or local day of a project, summed here from its session pages. */
async function expectedPageUnits(projectId: string, unitOf: (instant: number) => number) {
  const rows = await database.db
    .select()
    .from(sessionPages)
    .where(and(eq(sessionPages.projectId, projectId), gt(sessionPages.views, 0)));
  const expected = new Map<string, PageSums>();
  for (const page of rows) {
    const key = keyOf([unitOf(page.startedAt.getTime()), page.origin, page.path, page.title]);
    addPage(expected, key, page);
  }
  return expected;
}

/** The page rows per hour and per day of a project as the tables hold them. */
async function storedPageUnits(projectId: string) {
  const stored = (unit: Date, row: typeof pageRollups.$inferSelect | typeof pageDayRollups.$inferSelect) =>
    [
      keyOf([unit.getTime(), row.origin, row.path, row.title]),
      {
        sessions: row.sessions,
        pageviews: row.pageviews,
        bounces: row.bounces,
        durationMs: row.durationMs,
        timedViews: row.timedViews,
      },
    ] as const;
  const hours = await database.db.select().from(pageRollups).where(eq(pageRollups.projectId, projectId));
  const days = await database.db.select().from(pageDayRollups).where(eq(pageDayRollups.projectId, projectId));
  return {
    hours: new Map(hours.map((row) => stored(row.hour, row))),
    days: new Map(days.map((row) => stored(row.day, row))),
  };
}

/**
 * Every table kept by difference holds what a project's sessions and pages give, in its timezone:
 * the pairs, the pages per value, the session and page rows per hour and per local day, and the
 * bit strings per local day.
 */
async function expectExact(projectId: string, timezone = "UTC"): Promise<void> {
  expect(await storedPairs(projectId)).toEqual(await expectedPairs(projectId, timezone));
  const pages = await expectedDimensionPages(projectId, timezone);
  expect(pages.size).toBeGreaterThan(0);
  expect(await storedDimensionPages(projectId)).toEqual(pages);
  const localDay = (instant: number) => startOfLocalDay(instant, timezone);
  expect(await storedSessionUnits(projectId)).toEqual({
    hours: await expectedSessionUnits(projectId, HOURS),
    days: await expectedSessionUnits(projectId, localDay),
  });
  expect(await storedPageUnits(projectId)).toEqual({
    hours: await expectedPageUnits(projectId, HOURS),
    days: await expectedPageUnits(projectId, localDay),
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
    const expected = await expectedPairs(id, "UTC");
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
    const stored = await storedPairs(id);
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
    const expected = await expectedPairs(moved, "Asia/Tokyo");
    expect([...expected.keys()].some((key) => JSON.parse(key)[0] % (24 * HOUR) === 15 * HOUR)).toBe(true);
    await expectExact(moved, "Asia/Tokyo");
  });
});
