import { and, eq, gt } from "drizzle-orm";
import type { Database } from "../../../src/db/client";
import {
  events,
  pageDayRollups,
  pageDimensionRollups,
  pageRollups,
  sessionDayRollups,
  sessionPages,
  sessionPairRollups,
  sessionRollups,
  sessions,
} from "../../../src/db/schema";
import { BREAKDOWN_DIMENSIONS, DIMENSION_PREFIXES } from "../../../src/lib/dimensions";
import { startOfLocalDay } from "../../../src/lib/timezone";

// The sums the rollups kept by difference must hold, counted here from a project's sessions and
// their pages, beside what the tables hold (test/node/rollups-by-difference.test.ts): the pairs of
// values per day, the pages per value and day, and the session and page rows per hour or day.

const HOUR = 3_600_000;

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

export const keyOf = (parts: Array<string | number | null>) => JSON.stringify(parts);

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
async function valuesOfSessions(
  db: Database,
  projectId: string,
): Promise<Map<string, Array<[string, string]>>> {
  const rows = await db
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
export async function expectedPairs(
  db: Database,
  projectId: string,
  timezone: string,
): Promise<Map<string, Sums>> {
  const rows = await db.select().from(sessions).where(eq(sessions.projectId, projectId));
  const values = await valuesOfSessions(db, projectId);
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
export async function storedPairs(db: Database, projectId: string): Promise<Map<string, Sums>> {
  const p = sessionPairRollups;
  const rows = await db.select().from(p).where(eq(p.projectId, projectId));
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
export async function expectedDimensionPages(
  db: Database,
  projectId: string,
  timezone: string,
): Promise<Map<string, PageSums>> {
  const rows = await db
    .select({ page: sessionPages, session: sessions })
    .from(sessionPages)
    .innerJoin(
      sessions,
      and(eq(sessions.projectId, sessionPages.projectId), eq(sessions.id, sessionPages.sessionId)),
    )
    .where(and(eq(sessionPages.projectId, projectId), gt(sessionPages.views, 0)));
  const values = await valuesOfSessions(db, projectId);
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
export async function storedDimensionPages(db: Database, projectId: string): Promise<Map<string, PageSums>> {
  const r = pageDimensionRollups;
  const rows = await db.select().from(r).where(eq(r.projectId, projectId));
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

export const HOURS = (instant: number) => Math.floor(instant / HOUR) * HOUR;

/** The session rows per hour or local day of a project (all sessions, each dimension value, each path and event name), summed here. */
export async function expectedSessionUnits(
  db: Database,
  projectId: string,
  unitOf: (instant: number) => number,
) {
  const rows = await db.select().from(sessions).where(eq(sessions.projectId, projectId));
  const values = await valuesOfSessions(db, projectId);
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
export async function storedSessionUnits(db: Database, projectId: string) {
  const stored = (
    unit: Date,
    row: typeof sessionRollups.$inferSelect | typeof sessionDayRollups.$inferSelect,
  ) => [keyOf([unit.getTime(), row.dimension, row.name, row.prefix]), sessionSums(row)] as const;
  const hours = await db.select().from(sessionRollups).where(eq(sessionRollups.projectId, projectId));
  const days = await db.select().from(sessionDayRollups).where(eq(sessionDayRollups.projectId, projectId));
  return {
    hours: new Map(hours.map((row) => stored(row.hour, row))),
    days: new Map(days.map((row) => stored(row.day, row))),
  };
}

/** The page rows per hour or local day of a project, summed here from its session pages. */
export async function expectedPageUnits(
  db: Database,
  projectId: string,
  unitOf: (instant: number) => number,
) {
  const rows = await db
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
export async function storedPageUnits(db: Database, projectId: string) {
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
  const hours = await db.select().from(pageRollups).where(eq(pageRollups.projectId, projectId));
  const days = await db.select().from(pageDayRollups).where(eq(pageDayRollups.projectId, projectId));
  return {
    hours: new Map(hours.map((row) => stored(row.hour, row))),
    days: new Map(days.map((row) => stored(row.day, row))),
  };
}
