import { and, asc, eq, getTableColumns, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  pageRollups,
  projects,
  sessionDayRollups,
  sessionPages,
  sessionRollups,
  sessions,
  visitorDaySketches,
} from "../../src/db/schema";
import { BREAKDOWN_DIMENSIONS, type BreakdownDimension } from "../../src/lib/dimensions";
import { startOfLocalDay } from "../../src/lib/timezone";
import { sessionBreakdown } from "../../src/queries/insights/breakdowns";
import { sessionMetrics } from "../../src/queries/insights/metrics";
import type { SessionScope } from "../../src/queries/insights/model";
import { topPages } from "../../src/queries/insights/pages";
import { estimateVisitors, SKETCH_REGISTERS } from "../../src/queries/insights/visitor-sketch";
import { EXACT_VISITORS_UP_TO, estimatedVisitors } from "../../src/queries/insights/visitors";
import {
  createOrganization,
  createProject,
  type EventInput,
  insertEvents,
  uniqueId,
} from "../support/factories";
import { testDatabase } from "../support/node/database";
import { storedSketches } from "../support/node/sketches";
import { generateTraffic, shuffled } from "../support/traffic";

/**
 * The hourly rollups against the exact path over the same sessions: same numbers for every
 * endpoint (unique visitors within ±2 %), and the same rollup rows whether the events arrived in
 * one batch or in shuffled small batches with a refresh between each.
 */

const database = testDatabase();
afterAll(() => database.close());

const HOUR = 3_600_000;
const FROM = Date.UTC(2026, 4, 1);
const TO = Date.UTC(2026, 4, 8);
const ALL_ROWS = { offset: 0, limit: 1_000 };

const oneBatch = uniqueId("rollup-batch");
const trickled = uniqueId("rollup-trickle");

function traffic(projectId: string): EventInput[] {
  return generateTraffic({ projectId, seed: 41, sessions: 400, from: FROM, to: TO }) as EventInput[];
}

beforeAll(async () => {
  await insertEvents(database.db, traffic(oneBatch));
  const events = shuffled(traffic(trickled), 7);
  for (let i = 0; i < events.length; i += 150) {
    await insertEvents(database.db, events.slice(i, i + 150));
  }
});

const scope = (projectId: string, start: number, end: number, rollups: boolean): SessionScope => ({
  projectId,
  window: { start, end },
  filters: [],
  rollups,
  projectTimezone: "UTC",
});

const WINDOWS: Array<[string, number, number, number]> = [
  ["the whole week by day", FROM, TO, 24 * HOUR],
  ["one day by hour", FROM + 2 * 24 * HOUR, FROM + 3 * 24 * HOUR, HOUR],
  ["odd hours, 5-hour buckets", FROM + 7 * HOUR, FROM + 92 * HOUR, 5 * HOUR],
];

describe("rollup path = exact path", () => {
  for (const [label, start, end, step] of WINDOWS) {
    const buckets: number[] = [];
    for (let t = start; t < end; t += step) buckets.push(t);

    it(`metrics: ${label}`, async () => {
      const exact = await sessionMetrics(database.db, scope(oneBatch, start, end, false), buckets);
      const rolled = await sessionMetrics(database.db, scope(oneBatch, start, end, true), buckets);
      expect(exact.totals.total_sessions).toBeGreaterThan(0);
      expect(exact.totals.total_sessions).toBeLessThanOrEqual(EXACT_VISITORS_UP_TO);
      // Few sessions: the rollup path counts visitors exactly too.
      expect(rolled).toEqual(exact);
    });

    it(`visitors from the sketches: ${label}`, async () => {
      const exact = await sessionMetrics(database.db, scope(oneBatch, start, end, false), buckets);
      const estimated = await estimatedVisitors(database.db, scope(oneBatch, start, end, true), buckets);
      const within2Percent = (value: number | undefined, truth: number) =>
        Math.abs((value ?? 0) - truth) <= truth * 0.02;
      expect(within2Percent(estimated.get(0), exact.totals.unique_visitors)).toBe(true);
      exact.series.forEach((point, index) => {
        expect({ index, ok: within2Percent(estimated.get(index + 1), point.unique_visitors) }).toEqual({
          index,
          ok: true,
        });
      });
    });

    it(`pages and every breakdown: ${label}`, async () => {
      const exactPages = await topPages(database.db, scope(oneBatch, start, end, false), ALL_ROWS);
      expect(exactPages.length).toBeGreaterThan(1);
      expect(await topPages(database.db, scope(oneBatch, start, end, true), ALL_ROWS)).toEqual(exactPages);
      for (const dimension of BREAKDOWN_DIMENSIONS) {
        const exact = await sessionBreakdown(
          database.db,
          scope(oneBatch, start, end, false),
          dimension,
          ALL_ROWS,
        );
        const rolled = await sessionBreakdown(
          database.db,
          scope(oneBatch, start, end, true),
          dimension,
          ALL_ROWS,
        );
        expect({ dimension, rows: rolled }).toEqual({ dimension, rows: exact });
      }
    });
  }

  it("pages further down a ranked list, and a window that is not whole hours (exact path)", async () => {
    const rolled = await topPages(database.db, scope(oneBatch, FROM, TO, true), { offset: 2, limit: 3 });
    const exact = await topPages(database.db, scope(oneBatch, FROM, TO, false), { offset: 2, limit: 3 });
    expect(rolled).toEqual(exact);
    const partial = await sessionMetrics(database.db, scope(oneBatch, FROM + 90_000, TO, true), [
      FROM + 90_000,
    ]);
    expect(partial.approximate).toEqual([]);
  });
});

describe("day rollups of the project's timezone", () => {
  const DAY = 24 * HOUR;
  for (const timezone of ["Europe/Oslo", "Asia/Kolkata"]) {
    it(`answer like the exact path for a project in ${timezone}`, async () => {
      const organizationId = await createOrganization(database.db);
      const projectId = await createProject(database.db, organizationId, { timezone });
      await insertEvents(
        database.db,
        generateTraffic({ projectId, seed: 44, sessions: 300, from: FROM, to: TO }) as EventInput[],
      );
      // Every local day gets its day row, Kolkata's that start at :30 too: each holds the sessions
      // that started between its midnight and the next (the query layer reads them only where
      // they meet whole UTC hours).
      const days = await database.db
        .select({ day: sessionDayRollups.day, sessions: sessionDayRollups.sessions })
        .from(sessionDayRollups)
        .where(and(eq(sessionDayRollups.projectId, projectId), eq(sessionDayRollups.dimension, "")));
      const started = await database.db
        .select({ startedAt: sessions.startedAt })
        .from(sessions)
        .where(eq(sessions.projectId, projectId));
      const perDay = new Map<number, number>();
      for (const { startedAt } of started) {
        const day = startOfLocalDay(startedAt.getTime(), timezone);
        perDay.set(day, (perDay.get(day) ?? 0) + 1);
      }
      expect(perDay.size).toBeGreaterThan(5);
      expect(new Map(days.map((row) => [row.day.getTime(), row.sessions]))).toEqual(perDay);
      const osloMidnight = FROM - 2 * HOUR;
      const cases: Array<[string, number, number, number[]]> = [
        ["UTC days", FROM, TO, [FROM, FROM + 3 * DAY]],
        ["Oslo days", osloMidnight, osloMidnight + 6 * DAY, [osloMidnight, osloMidnight + DAY]],
        ["hours across days", FROM + 5 * HOUR, FROM + 77 * HOUR, [FROM + 5 * HOUR]],
      ];
      for (const [label, start, end, buckets] of cases) {
        const on = { ...scope(projectId, start, end, true), projectTimezone: timezone };
        const off = { ...on, rollups: false };
        expect({ label, rows: await topPages(database.db, on, ALL_ROWS) }).toEqual({
          label,
          rows: await topPages(database.db, off, ALL_ROWS),
        });
        for (const dimension of ["referrer_name", "city", "os_version"] as BreakdownDimension[]) {
          expect({
            label,
            dimension,
            rows: await sessionBreakdown(database.db, on, dimension, ALL_ROWS),
          }).toEqual({
            label,
            dimension,
            rows: await sessionBreakdown(database.db, off, dimension, ALL_ROWS),
          });
        }
        expect({ label, metrics: await sessionMetrics(database.db, on, buckets) }).toEqual({
          label,
          metrics: await sessionMetrics(database.db, off, buckets),
        });
      }
    });
  }
});

describe("incremental maintenance", () => {
  /** A table's columns but the project id. */
  function withoutProject<T extends typeof sessionRollups | typeof pageRollups | typeof sessionPages>(
    table: T,
  ) {
    const { projectId: _projectId, ...columns } = getTableColumns(table);
    return columns;
  }

  /** A project's rollup rows without the project id, in a stable order. */
  async function rollupRows(projectId: string) {
    const sessionRows = await database.db
      .select(withoutProject(sessionRollups))
      .from(sessionRollups)
      .where(eq(sessionRollups.projectId, projectId))
      .orderBy(
        asc(sessionRollups.hour),
        asc(sessionRollups.dimension),
        sql`${sessionRollups.name} collate "C" nulls last`,
        sql`${sessionRollups.prefix} collate "C" nulls last`,
      );
    const pageRows = await database.db
      .select(withoutProject(pageRollups))
      .from(pageRollups)
      .where(eq(pageRollups.projectId, projectId))
      .orderBy(
        asc(pageRollups.hour),
        sql`${pageRollups.origin} collate "C" nulls last`,
        sql`${pageRollups.path} collate "C" nulls last`,
      );
    const sketchRows = (await storedSketches(database.db, projectId)).hours;
    return { sessionRows, pageRows, sketchRows, pages: await sessionPageRows(projectId) };
  }

  /** A project's session pages without the project id, by session, origin and path. */
  function sessionPageRows(projectId: string) {
    return database.db
      .select(withoutProject(sessionPages))
      .from(sessionPages)
      .where(eq(sessionPages.projectId, projectId))
      .orderBy(
        sql`${sessionPages.sessionId} collate "C"`,
        sql`${sessionPages.origin} collate "C" nulls last`,
        sql`${sessionPages.path} collate "C" nulls last`,
      );
  }

  type SessionPageRow = Awaited<ReturnType<typeof sessionPageRows>>[number];

  function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
    const groups = new Map<string, T[]>();
    for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
    return groups;
  }

  /** Session pages computed here from the raw events: every (origin, path) of any event. */
  function referenceSessionPages(rows: EventInput[]): SessionPageRow[] {
    const sessions = groupBy(rows, (row) => String(row.sessionId));
    const byText = (a: string | null, b: string | null) =>
      a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1;
    const result: SessionPageRow[] = [];
    for (const sessionId of [...sessions.keys()].sort()) {
      const events = sessions.get(sessionId) ?? [];
      const isView = (event: EventInput) => (event.name ?? "screen_view") === "screen_view";
      const startedAt = new Date(Math.min(...events.map((event) => (event.createdAt as Date).getTime())));
      const isBounce = events.filter(isView).length <= 1;
      const pages = groupBy(events, (event) => JSON.stringify([event.origin ?? null, event.path ?? null]));
      const sessionRows = [...pages].map(([key, pageEvents]): SessionPageRow => {
        const [origin, path] = JSON.parse(key) as [string | null, string | null];
        const views = pageEvents.filter(isView);
        const timed = views.filter((event) => (event.duration ?? 0) > 0);
        const titles = views.flatMap((event) => (event.title ? [event.title] : []));
        return {
          sessionId,
          startedAt,
          isBounce,
          origin,
          path,
          title: titles.length > 0 ? titles.reduce((a, b) => (b > a ? b : a)) : null,
          views: views.length,
          durationMs: timed.reduce((sum, event) => sum + (event.duration ?? 0), 0),
          timedViews: timed.length,
        };
      });
      sessionRows.sort((a, b) => byText(a.origin, b.origin) || byText(a.path, b.path));
      result.push(...sessionRows);
    }
    return result;
  }

  it("session pages hold every page of every event of each session, as computed from the events", async () => {
    const expected = referenceSessionPages(traffic(oneBatch));
    expect(expected.some((row) => row.views === 0)).toBe(true);
    expect(expected.some((row) => row.path === null)).toBe(true);
    expect(await sessionPageRows(oneBatch)).toEqual(expected);
  });

  it("shuffled small batches leave exactly the rollups of one batch", async () => {
    const batch = await rollupRows(oneBatch);
    const trickle = await rollupRows(trickled);
    expect(batch.sessionRows.length).toBeGreaterThan(100);
    expect(batch.pageRows.length).toBeGreaterThan(50);
    expect(batch.sketchRows.length).toBeGreaterThan(50);
    expect(batch.pages.length).toBeGreaterThan(400);
    expect(trickle).toEqual(batch);
  });

  it("a late event earlier than a session's start moves the session to its new hour", async () => {
    const projectId = uniqueId("rollup-late");
    const at = (minutes: number) => new Date(FROM + 10 * HOUR + minutes * 60_000);
    await insertEvents(database.db, [
      { projectId, sessionId: "s1", createdAt: at(5), path: "/b" },
      { projectId, sessionId: "s1", createdAt: at(9), path: "/c" },
    ]);
    await insertEvents(database.db, [{ projectId, sessionId: "s1", createdAt: at(-20), path: "/a" }]);
    const { sessionRows, pageRows, pages } = await rollupRows(projectId);
    expect(pages.map((row) => [row.startedAt.getTime(), row.path])).toEqual([
      [at(-20).getTime(), "/a"],
      [at(-20).getTime(), "/b"],
      [at(-20).getTime(), "/c"],
    ]);
    const totals = sessionRows.filter((row) => row.dimension === "");
    expect(totals.map((row) => [row.hour.getTime(), row.sessions, row.screenViews])).toEqual([
      [FROM + 9 * HOUR, 1, 3],
    ]);
    expect(pageRows.map((row) => [row.hour.getTime(), row.path])).toEqual([
      [FROM + 9 * HOUR, "/a"],
      [FROM + 9 * HOUR, "/b"],
      [FROM + 9 * HOUR, "/c"],
    ]);
  });
});

describe("visitor sketches", () => {
  it("day sketches follow the project's timezone, and its changes", async () => {
    const organizationId = await createOrganization(database.db);
    const projectId = await createProject(database.db, organizationId, { timezone: "Europe/Oslo" });
    await insertEvents(
      database.db,
      generateTraffic({ projectId, seed: 43, sessions: 300, from: FROM, to: TO }) as EventInput[],
    );
    const days = async () =>
      (
        await database.db
          .select({ day: visitorDaySketches.day })
          .from(visitorDaySketches)
          .where(and(eq(visitorDaySketches.projectId, projectId), eq(visitorDaySketches.plane, 1)))
          .orderBy(asc(visitorDaySketches.day))
      ).map((row) => row.day.toISOString());
    // Oslo midnights (UTC+2 in May): the evening before FROM up to the last day of traffic,
    // which ends at 02:00 on the 8th in Oslo.
    expect(await days()).toEqual(
      Array.from({ length: 8 }, (_, i) => new Date(FROM - 2 * HOUR + i * 24 * HOUR).toISOString()),
    );
    const osloDays = Array.from({ length: 7 }, (_, i) => FROM - 2 * HOUR + i * 24 * HOUR);
    const visitorsIn = async (timezone: string) => {
      const window = scope(projectId, osloDays[0] ?? 0, (osloDays[6] ?? 0) + 24 * HOUR, true);
      return estimatedVisitors(database.db, { ...window, projectTimezone: timezone }, osloDays);
    };
    const exact = await sessionMetrics(
      database.db,
      scope(projectId, osloDays[0] ?? 0, (osloDays[6] ?? 0) + 24 * HOUR, false),
      osloDays,
    );
    const fromDays = await visitorsIn("Europe/Oslo");
    expect(Math.abs((fromDays.get(0) ?? 0) - exact.totals.unique_visitors)).toBeLessThanOrEqual(
      exact.totals.unique_visitors * 0.02,
    );

    // The timezone changes: until the next refresh the Oslo days must not be used for UTC ones.
    await database.db.update(projects).set({ timezone: "UTC" }).where(eq(projects.id, projectId));
    expect(await visitorsIn("UTC")).toEqual(await visitorsIn("Europe/Oslo"));
    const utcWeek = { ...scope(projectId, FROM, TO, true), projectTimezone: "UTC" };
    expect(await topPages(database.db, utcWeek, ALL_ROWS)).toEqual(
      await topPages(database.db, { ...utcWeek, rollups: false }, ALL_ROWS),
    );
    await database.db.execute(sql`select refresh_derived()`);
    expect(await days()).toEqual(
      Array.from({ length: 7 }, (_, i) => new Date(FROM + i * 24 * HOUR).toISOString()),
    );
    expect(await visitorsIn("UTC")).toEqual(fromDays);
  });

  it("estimate 30,000 distinct visitors within ±2 %, and 1 and 0 exactly", async () => {
    const projectId = uniqueId("rollup-visitors");
    // Loaded in SQL: 30,000 one-event sessions of distinct visitors over 48 hours.
    await database.db.execute(sql`
      insert into events (id, project_id, name, device_id, profile_id, session_id, created_at, path)
      select gen_random_uuid(), ${projectId}, 'screen_view', 'device-' || i, 'visitor-' || i, 'session-' || i,
        ${new Date(FROM).toISOString()}::timestamptz + (i % 2880) * interval '1 minute', '/'
      from generate_series(1, 30000) as i`);
    await database.db.execute(sql`select refresh_derived()`);
    const buckets = [FROM, FROM + 24 * HOUR];
    const window = (rollups: boolean) => scope(projectId, FROM, FROM + 48 * HOUR, rollups);
    const answer = await sessionMetrics(database.db, window(true), buckets);
    const exact = await sessionMetrics(database.db, window(false), buckets);
    expect(answer.approximate).toEqual(["unique_visitors"]);
    expect(answer.totals.total_sessions).toBe(30_000);
    expect(exact.totals.unique_visitors).toBe(30_000);
    expect(Math.abs(answer.totals.unique_visitors - 30_000)).toBeLessThanOrEqual(600);
    answer.series.forEach((point, index) => {
      const truth = exact.series[index]?.unique_visitors ?? 0;
      expect(truth).toBeGreaterThan(10_000);
      expect(Math.abs(point.unique_visitors - truth)).toBeLessThanOrEqual(truth * 0.02);
    });
    expect(estimateVisitors(new Map())).toBe(0);
    expect(estimateVisitors(new Map([[1, 1]]))).toBe(1);
    expect(estimateVisitors(new Map([[1, SKETCH_REGISTERS]]))).toBeGreaterThan(SKETCH_REGISTERS);
  });
});
