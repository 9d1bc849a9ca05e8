import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageDimensionRollups, projects, sessionPairRollups } from "../../src/db/schema";
import { BREAKDOWN_DIMENSIONS } from "../../src/lib/dimensions";
import { sessionBreakdown } from "../../src/queries/insights/breakdowns";
import {
  dayRollupsFilter,
  dimensionFilter,
  pairRollupsFilter,
  type SessionScope,
} from "../../src/queries/insights/model";
import { topPages } from "../../src/queries/insights/pages";
import { COVERED_FILTERS, is, MULTI_VALUED_FILTERS } from "../support/dimension-filter-cases";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { type FilterInput, parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import { generateTraffic } from "../support/traffic";

/**
 * Under a filter on one dimension, a breakdown by another is answered from the pair rollups and
 * top pages from the page rollups per dimension value, for the whole project days of the window,
 * and from the sessions and their pages for the rest. Every answer is held against the exact path
 * over the same sessions.
 */

const database = testDatabase();
afterAll(() => database.close());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FROM = Date.UTC(2026, 5, 1);
const TO = FROM + 7 * DAY;
const ALL_ROWS = { offset: 0, limit: 1_000 };

let organizationId: string;

async function trafficProject(timezone: string | null): Promise<string> {
  const id = await createProject(database.db, organizationId, { timezone });
  const traffic = generateTraffic({ projectId: id, seed: 53, sessions: 500, from: FROM, to: TO });
  await insertEvents(database.db, traffic as EventInput[]);
  return id;
}

let projectId: string;

beforeAll(async () => {
  organizationId = await createOrganization(database.db);
  projectId = await trafficProject(null);
});

function scope(
  filters: FilterInput[],
  start: number,
  end: number,
  rollups: boolean,
  id = projectId,
): SessionScope {
  return { projectId: id, window: { start, end }, filters: parse(filters), rollups, projectTimezone: "UTC" };
}

const WINDOWS: Array<[string, number, number]> = [
  ["the week: whole days only", FROM, TO],
  ["odd hours: whole days and the hours around them", FROM + 7 * HOUR, FROM + 92 * HOUR],
  ["within one day: no whole day", FROM + 2 * DAY + 5 * HOUR, FROM + 2 * DAY + 17 * HOUR],
];

/** Both paths, every other dimension, every window: the rows of the exact path. */
async function expectPairsEqualExact(
  filter: FilterInput,
  id = projectId,
  windows = WINDOWS,
): Promise<number> {
  const own = dimensionFilter(scope([filter], FROM, TO, true, id))?.dimension;
  let rows = 0;
  for (const dimension of BREAKDOWN_DIMENSIONS.filter((other) => other !== own)) {
    for (const [windowLabel, start, end] of windows) {
      const exact = await sessionBreakdown(
        database.db,
        scope([filter], start, end, false, id),
        dimension,
        ALL_ROWS,
      );
      const paired = await sessionBreakdown(
        database.db,
        scope([filter], start, end, true, id),
        dimension,
        ALL_ROWS,
      );
      expect({ dimension, windowLabel, paired }).toEqual({ dimension, windowLabel, paired: exact });
      rows += exact.length;
    }
  }
  return rows;
}

describe("which breakdowns the pair rollups answer", () => {
  it("those under one filter on another breakdown dimension, in any window", () => {
    const country = [is("country", "is", ["NO"])];
    expect(pairRollupsFilter(scope(country, FROM, TO, true), "browser")?.dimension).toBe("country");
    expect(pairRollupsFilter(scope(country, FROM + 60_000, TO - 1, true), "referrer")?.dimension).toBe(
      "country",
    );
    // Its own dimension: the session rollups. Without the switch, two filters, another field: exact.
    expect(pairRollupsFilter(scope(country, FROM, TO, true), "country")).toBeUndefined();
    expect(pairRollupsFilter(scope(country, FROM, TO, false), "browser")).toBeUndefined();
    expect(
      pairRollupsFilter(scope([...country, is("device", "is", ["mobile"])], FROM, TO, true), "browser"),
    ).toBeUndefined();
    // One path: the pair rows of the paths; several (a session counts under each), or any other operator: exact.
    expect(pairRollupsFilter(scope([is("path", "is", ["/"])], FROM, TO, true), "browser")?.dimension).toBe(
      "path",
    );
    expect(
      pairRollupsFilter(scope([is("path", "is", ["/", "/cart"])], FROM, TO, true), "browser"),
    ).toBeUndefined();
    expect(
      pairRollupsFilter(scope([is("path", "startsWith", ["/"])], FROM, TO, true), "browser"),
    ).toBeUndefined();
    expect(
      pairRollupsFilter(scope([is("country", "regex", ["^N"])], FROM, TO, true), "browser"),
    ).toBeUndefined();
  });
});

describe("breakdowns under a filter from the pair rollups = the exact path", () => {
  for (const [label, filter] of [...COVERED_FILTERS, ...MULTI_VALUED_FILTERS]) {
    it(`every other dimension, ${label}`, async () => {
      expect(await expectPairsEqualExact(filter)).toBeGreaterThan(50);
    });
  }

  it("pages of a ranked list: the same rows at every offset", async () => {
    const filter = [is("country", "isNot", ["US"])];
    const all = await sessionBreakdown(database.db, scope(filter, FROM, TO, false), "city", ALL_ROWS);
    expect(all.length).toBeGreaterThan(3);
    for (let offset = 0; offset < all.length; offset += 2) {
      const page = await sessionBreakdown(database.db, scope(filter, FROM, TO, true), "city", {
        offset,
        limit: 2,
      });
      expect(page).toEqual(all.slice(offset, offset + 3));
    }
  });

  for (const [dimension, value] of [
    ["country", "NO"],
    ["path", "/pricing"],
    ["name", "purchase"],
  ] as const) {
    it(`read the pair rows (${dimension} is ${value}): a row changed by hand changes the answer of whole days only`, async () => {
      const id = await trafficProject(null);
      const filter = [is(dimension, "is", [value])];
      const before = await sessionBreakdown(
        database.db,
        scope(filter, FROM, TO, true, id),
        "device",
        ALL_ROWS,
      );
      const p = sessionPairRollups;
      const tampered = await database.db
        .update(p)
        .set({ sessions: sql`${p.sessions} + 1000` })
        .where(
          and(
            eq(p.projectId, id),
            eq(p.dimension, dimension),
            eq(p.name, value),
            eq(p.byDimension, "device"),
            eq(p.byName, "desktop"),
            eq(p.day, new Date(FROM + 3 * DAY)),
          ),
        )
        .returning({ sessions: p.sessions });
      expect(tampered).toHaveLength(1);
      const after = await sessionBreakdown(
        database.db,
        scope(filter, FROM, TO, true, id),
        "device",
        ALL_ROWS,
      );
      const desktop = (rows: typeof before) => rows.find((row) => row.name === "desktop")?.sessions ?? 0;
      expect(desktop(after) - desktop(before)).toBe(1000);
      // A window inside that day reads its sessions.
      const inside = scope(filter, FROM + 3 * DAY + HOUR, FROM + 4 * DAY - HOUR, true, id);
      const exact = await sessionBreakdown(database.db, { ...inside, rollups: false }, "device", ALL_ROWS);
      expect(await sessionBreakdown(database.db, inside, "device", ALL_ROWS)).toEqual(exact);
    });
  }

  it("read the sessions while the days are not built in the project's new timezone", async () => {
    const id = await trafficProject(null);
    await database.db.update(projects).set({ timezone: "America/New_York" }).where(eq(projects.id, id));
    const zoned = (filters: FilterInput[], start: number, end: number, rollups: boolean): SessionScope => ({
      ...scope(filters, start, end, rollups, id),
      projectTimezone: "America/New_York",
    });
    const filter = [is("device", "is", ["mobile"])];
    // Whole New York days: before the refresh their pair rows are UTC days, which must not answer.
    const start = FROM + DAY + 4 * HOUR;
    const end = FROM + 5 * DAY + 4 * HOUR;
    const exact = await sessionBreakdown(database.db, zoned(filter, start, end, false), "country", ALL_ROWS);
    expect(await sessionBreakdown(database.db, zoned(filter, start, end, true), "country", ALL_ROWS)).toEqual(
      exact,
    );
    await database.db.execute(sql`select refresh_derived()`);
    expect(await sessionBreakdown(database.db, zoned(filter, start, end, true), "country", ALL_ROWS)).toEqual(
      exact,
    );
  });
});

describe("top pages under a filter from the page rollups per dimension value = the exact path", () => {
  it("answered so under one filter on a breakdown dimension or one path, in any window", () => {
    expect(dayRollupsFilter(scope([is("city", "startsWith", ["S"])], FROM + 1, TO, true))?.dimension).toBe(
      "city",
    );
    expect(dayRollupsFilter(scope([is("city", "startsWith", ["S"])], FROM, TO, false))).toBeUndefined();
    expect(dayRollupsFilter(scope([is("path", "is", ["/"])], FROM, TO, true))?.dimension).toBe("path");
    expect(dayRollupsFilter(scope([is("path", "isNot", ["/"])], FROM, TO, true))).toBeUndefined();
  });

  for (const [label, filter] of [...COVERED_FILTERS, ...MULTI_VALUED_FILTERS]) {
    it(label, async () => {
      let rows = 0;
      for (const [windowLabel, start, end] of WINDOWS) {
        const exact = await topPages(database.db, scope([filter], start, end, false), ALL_ROWS);
        const rolled = await topPages(database.db, scope([filter], start, end, true), ALL_ROWS);
        expect({ windowLabel, rolled }).toEqual({ windowLabel, rolled: exact });
        rows += exact.length;
      }
      expect(rows).toBeGreaterThan(3);
    });
  }

  it("pages of the list, and the rows read: a row changed by hand changes the answer", async () => {
    const filter = [is("device", "isNot", ["desktop"])];
    const all = await topPages(database.db, scope(filter, FROM, TO, false), ALL_ROWS);
    for (let offset = 0; offset < all.length; offset += 2) {
      const page = await topPages(database.db, scope(filter, FROM, TO, true), { offset, limit: 2 });
      expect(page).toEqual(all.slice(offset, offset + 3));
    }
    const id = await trafficProject(null);
    const r = pageDimensionRollups;
    const tampered = await database.db
      .update(r)
      .set({ pageviews: sql`${r.pageviews} + 500` })
      .where(
        and(
          eq(r.projectId, id),
          eq(r.dimension, "device"),
          eq(r.name, "mobile"),
          eq(r.path, "/pricing"),
          eq(r.day, new Date(FROM + 2 * DAY)),
        ),
      )
      .returning({ pageviews: r.pageviews });
    expect(tampered).toHaveLength(1);
    const mobile = [is("device", "is", ["mobile"])];
    const exact = await topPages(database.db, scope(mobile, FROM, TO, false, id), ALL_ROWS);
    const rolled = await topPages(database.db, scope(mobile, FROM, TO, true, id), ALL_ROWS);
    const pricing = (rows: typeof exact) => rows.find((row) => row.path === "/pricing")?.pageviews ?? 0;
    expect(pricing(rolled) - pricing(exact)).toBe(500);
  });
});
