import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import { isBreakdownDimension } from "../../src/lib/dimensions";
import { assertValidRegexes } from "../../src/queries/filter-conditions";
import { sessionBreakdown } from "../../src/queries/insights/breakdowns";
import { sessionMetrics } from "../../src/queries/insights/metrics";
import {
  breakdownRollupsCover,
  dimensionFilter,
  metricsRollupsCover,
  type SessionScope,
} from "../../src/queries/insights/model";
import { topPages } from "../../src/queries/insights/pages";
import { EXACT_VISITORS_UP_TO, windowVisitors } from "../../src/queries/insights/visitors";
import { COVERED_FILTERS, is, MULTI_VALUED_FILTERS } from "../support/dimension-filter-cases";
import { createOrganization, type EventInput, insertEvents, uniqueId } from "../support/factories";
import { type FilterInput, parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import { generateTraffic } from "../support/traffic";

/**
 * A filter on one breakdown dimension is answered from the rollups: counts from that dimension's
 * rows, visitors exactly or from the sketches per day and value. Each answer is held against the
 * exact path over the same sessions; the sketches against a build of the same events in one batch.
 */

const database = testDatabase();
afterAll(() => database.close());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FROM = Date.UTC(2026, 5, 1);
const TO = FROM + 7 * DAY;
const ALL_ROWS = { offset: 0, limit: 1_000 };

const projectId = uniqueId("dimension-filter");

beforeAll(async () => {
  const traffic = generateTraffic({ projectId, seed: 51, sessions: 500, from: FROM, to: TO });
  await insertEvents(database.db, traffic as EventInput[]);
});

function scope(filters: FilterInput[], start: number, end: number, rollups: boolean): SessionScope {
  return { projectId, window: { start, end }, filters: parse(filters), rollups, projectTimezone: "UTC" };
}

const COVERED = COVERED_FILTERS;

const WINDOWS: Array<[string, number, number, number]> = [
  ["the week by day", FROM, TO, DAY],
  ["one day by hour", FROM + 2 * DAY, FROM + 3 * DAY, HOUR],
  ["odd hours, 5-hour buckets", FROM + 7 * HOUR, FROM + 92 * HOUR, 5 * HOUR],
];

const bucketsOf = (start: number, end: number, step: number) =>
  Array.from({ length: Math.ceil((end - start) / step) }, (_, index) => start + index * step);

describe("which filters the rollups answer", () => {
  it("one filter on a breakdown dimension, with any operator but regex and without empty values, or on one path or name", () => {
    for (const [label, filter] of [...COVERED, ...MULTI_VALUED_FILTERS]) {
      expect({ label, covered: metricsRollupsCover(scope([filter], FROM, TO, true), []) }).toEqual({
        label,
        covered: true,
      });
    }
    const uncovered: FilterInput[][] = [
      [is("country", "regex", ["^N"])],
      [is("country", "is", ["NO", ""])],
      [is("country", "is", ["NO"]), is("device", "is", ["mobile"])],
      [is("profile_id", "is", ["user-1"])],
      // A session counts under each of its paths: rows of several paths would count it twice.
      [is("path", "is", ["/pricing", "/"])],
      [is("path", "contains", ["pricing"])],
      [is("path", "isNot", ["/pricing"])],
      [is("name", "is", ["purchase", "signup"])],
      [is("name", "startsWith", ["sign"])],
      [is("origin", "is", ["https://example.com"])],
      [is("path", "is", ["/pricing"]), is("country", "is", ["NO"])],
      [is("properties.plan", "is", ["pro"])],
    ];
    for (const filters of uncovered) {
      expect({ filters, covered: metricsRollupsCover(scope(filters, FROM, TO, true), []) }).toEqual({
        filters,
        covered: false,
      });
    }
    // Not on a minute edge, and not with the switch off.
    expect(metricsRollupsCover(scope([is("country", "is", ["NO"])], FROM + 60_000, TO, true), [])).toBe(
      false,
    );
    expect(metricsRollupsCover(scope([is("country", "is", ["NO"])], FROM, TO, false), [])).toBe(false);
  });

  it("a breakdown only of the filter's own dimension", () => {
    const filtered = scope([is("country", "is", ["NO"])], FROM, TO, true);
    expect(dimensionFilter(filtered)?.dimension).toBe("country");
    expect(breakdownRollupsCover(filtered, "country")).toBe(true);
    expect(breakdownRollupsCover(filtered, "browser")).toBe(false);
    expect(breakdownRollupsCover(scope([], FROM, TO, true), "browser")).toBe(true);
  });
});

describe("filtered answers from the rollups = the exact path", () => {
  for (const [label, filter] of [...COVERED, ...MULTI_VALUED_FILTERS]) {
    it(`metrics, ${label}`, async () => {
      for (const [windowLabel, start, end, step] of WINDOWS) {
        const buckets = bucketsOf(start, end, step);
        const exact = await sessionMetrics(database.db, scope([filter], start, end, false), buckets);
        const rolled = await sessionMetrics(database.db, scope([filter], start, end, true), buckets);
        expect({ windowLabel, rolled }).toEqual({ windowLabel, rolled: exact });
      }
      const week = await sessionMetrics(
        database.db,
        scope([filter], FROM, TO, false),
        bucketsOf(FROM, TO, DAY),
      );
      expect(week.totals.total_sessions).toBeGreaterThan(0);
    });
  }

  for (const [label, filter] of COVERED) {
    it(`the breakdown of its own dimension, ${label}`, async () => {
      const dimension = dimensionFilter(scope([filter], FROM, TO, true))?.dimension;
      if (!dimension || !isBreakdownDimension(dimension)) throw new Error("not a breakdown dimension filter");
      const exact = await sessionBreakdown(
        database.db,
        scope([filter], FROM, TO, false),
        dimension,
        ALL_ROWS,
      );
      const rolled = await sessionBreakdown(
        database.db,
        scope([filter], FROM, TO, true),
        dimension,
        ALL_ROWS,
      );
      expect(rolled).toEqual(exact);
    });
  }
});

/** The scope as a route builds it: Postgres says whether a regex pattern matches the empty text. */
async function probedScope(filter: FilterInput, start: number, end: number, rollups: boolean) {
  const filters = parse([filter]);
  const regexMatchesEmpty = await assertValidRegexes(database.db, filters);
  return { ...scope([filter], start, end, rollups), regexMatchesEmpty };
}

describe("a regex the rollups can answer: its patterns cannot match the empty text", () => {
  const REGEXES: Array<[string, FilterInput]> = [
    ["country regex ^(NO|SE)$", is("country", "regex", ["^(NO|SE)$"])],
    ["referrer_name regex oo (anywhere)", is("referrer_name", "regex", ["oo"])],
    ["city regex ^S or ^O, two patterns", is("city", "regex", ["^S", "^O"])],
    ["region regex on a dimension with a prefix", is("region", "regex", ["^Os"])],
  ];

  for (const [label, filter] of REGEXES) {
    it(`${label}: metrics, its own breakdown, another breakdown and the pages = the exact path`, async () => {
      const rolledScope = await probedScope(filter, FROM, TO, true);
      expect(rolledScope.regexMatchesEmpty).toBe(false);
      expect(metricsRollupsCover(rolledScope, [])).toBe(true);
      const exactScope = scope([filter], FROM, TO, false);
      for (const [windowLabel, start, end, step] of WINDOWS) {
        const buckets = bucketsOf(start, end, step);
        const exact = await sessionMetrics(database.db, { ...exactScope, window: { start, end } }, buckets);
        const rolled = await sessionMetrics(database.db, { ...rolledScope, window: { start, end } }, buckets);
        expect({ windowLabel, rolled }).toEqual({ windowLabel, rolled: exact });
      }
      const dimension = dimensionFilter(rolledScope)?.dimension;
      if (!dimension || !isBreakdownDimension(dimension)) throw new Error("not a breakdown dimension filter");
      for (const breakdown of [dimension, "browser"] as const) {
        const exact = await sessionBreakdown(database.db, exactScope, breakdown, ALL_ROWS);
        const rolled = await sessionBreakdown(database.db, rolledScope, breakdown, ALL_ROWS);
        expect({ breakdown, rolled }).toEqual({ breakdown, rolled: exact });
        expect(exact.length).toBeGreaterThan(0);
      }
      expect(await topPages(database.db, rolledScope, ALL_ROWS)).toEqual(
        await topPages(database.db, exactScope, ALL_ROWS),
      );
    });
  }

  it("a regex without the probe's answer stays on the exact path", () => {
    expect(metricsRollupsCover(scope([is("country", "regex", ["^N"])], FROM, TO, true), [])).toBe(false);
  });
});

describe("filters the rollups cannot tell apart from empty strings", () => {
  it("a regex that matches the empty string answers like the exact path", async () => {
    const filter = is("referrer_name", "regex", ["^$|^Goo"]);
    const buckets = bucketsOf(FROM, TO, DAY);
    const probed = await probedScope(filter, FROM, TO, true);
    expect(probed.regexMatchesEmpty).toBe(true);
    expect(metricsRollupsCover(probed, buckets)).toBe(false);
    const exact = await sessionMetrics(database.db, scope([filter], FROM, TO, false), buckets);
    const answered = await sessionMetrics(database.db, probed, buckets);
    expect(answered).toEqual(exact);
    // The data has sessions whose referrer name is "", which the regex keeps and the rollups store as not set.
    const empty = await sessionMetrics(
      database.db,
      scope([is("referrer_name", "is", [""])], FROM, TO, false),
      buckets,
    );
    expect(empty.totals.total_sessions).toBeGreaterThan(0);
  });
});

describe("visitors of a large filtered window, from the sketches per day and value", () => {
  const large = uniqueId("dimension-sketch");
  const SESSIONS = 24_000;
  const START = Date.UTC(2026, 6, 1);
  // Session i: starts at START + (i mod 2880) minutes, visitor v-(i mod 18000), country by i mod 5,
  // but Iceland for every 101st: large values stored as dense sketches, a small one as sparse; path
  // /pricing for every third session, "/" for the others.
  const country = (i: number) => (i % 101 === 0 ? "IS" : (["NO", "SE", "NO", "US", "DE"][i % 5] as string));

  beforeAll(async () => {
    const organizationId = await createOrganization(database.db);
    await database.db.insert(projects).values({ id: large, organizationId, name: large });
    await database.db.execute(sql`
      insert into events (project_id, name, device_id, profile_id, session_id, created_at, path, country)
      select ${large}, 'screen_view', 'v-' || (i % 18000), 'v-' || (i % 18000), 's-' || i,
        ${new Date(START).toISOString()}::timestamptz + (i % 2880) * interval '1 minute',
        case when i % 3 = 0 then '/pricing' else '/' end,
        case when i % 101 = 0 then 'IS' else (array['NO', 'SE', 'NO', 'US', 'DE'])[i % 5 + 1] end
      from generate_series(1, ${SESSIONS}) as i`);
    await database.db.execute(sql`select refresh_derived()`);
    // Statistics that know the project, as autovacuum would gather them after such a load: on a
    // shared test database its 24,000 sessions may stay under the refresh's own threshold, and a
    // project planned as one session reads the window's pages once per session.
    await database.db.execute(sql`analyze sessions, session_pages, session_names`);
  });

  const largeScope = (filters: FilterInput[], rollups: boolean): SessionScope => ({
    projectId: large,
    window: { start: START, end: START + 2 * DAY },
    filters: parse(filters),
    rollups,
    projectTimezone: "UTC",
  });

  // An independent count of each filter: the sessions i it keeps, their visitors v-(i mod 18000).
  for (const [filter, keeps] of [
    [is("country", "is", ["NO"]), (i: number) => country(i) === "NO"],
    [is("path", "is", ["/pricing"]), (i: number) => i % 3 === 0],
    [is("name", "is", ["screen_view"]), () => true],
  ] as const) {
    it(`within ±2 % of the exact count, flagged approximate; every count exact (${filter.name})`, async () => {
      const buckets = [START, START + DAY];
      const exact = await sessionMetrics(database.db, largeScope([filter], false), buckets);
      const rolled = await sessionMetrics(database.db, largeScope([filter], true), buckets);
      const visitors = new Set<number>();
      let sessions = 0;
      for (let i = 1; i <= SESSIONS; i++) {
        if (!keeps(i)) continue;
        sessions++;
        visitors.add(i % 18_000);
      }
      expect(exact.totals.total_sessions).toBe(sessions);
      expect(exact.totals.unique_visitors).toBe(visitors.size);
      expect(rolled.approximate).toEqual(["unique_visitors"]);
      const { unique_visitors: estimate, ...counts } = rolled.totals;
      const { unique_visitors: truth, ...exactCounts } = exact.totals;
      expect(counts).toEqual(exactCounts);
      expect(Math.abs(estimate - truth)).toBeLessThanOrEqual(truth * 0.02);
      rolled.series.forEach((point, index) => {
        const partner = exact.series[index];
        expect(Math.abs(point.unique_visitors - (partner?.unique_visitors ?? 0))).toBeLessThanOrEqual(
          (partner?.unique_visitors ?? 0) * 0.02,
        );
      });
    });
  }

  it("merges dense and sparse sketches: a small value, and all but the largest", async () => {
    const buckets = [START, START + DAY];
    for (const filter of [is("country", "is", ["IS"]), is("country", "isNot", ["NO"])]) {
      const exact = await sessionMetrics(database.db, largeScope([filter], false), buckets);
      const rolled = await sessionMetrics(database.db, largeScope([filter], true), buckets);
      expect(rolled.approximate).toEqual(["unique_visitors"]);
      expect(rolled.totals.total_sessions).toBe(exact.totals.total_sessions);
      const truth = exact.totals.unique_visitors;
      expect({ filter, within: Math.abs(rolled.totals.unique_visitors - truth) <= truth * 0.02 }).toEqual({
        filter,
        within: true,
      });
      rolled.series.forEach((point, index) => {
        const partner = exact.series[index]?.unique_visitors ?? 0;
        expect(Math.abs(point.unique_visitors - partner)).toBeLessThanOrEqual(partner * 0.02);
      });
    }
  });

  it("merges to exactly the unfiltered sketch when the filter keeps every value", async () => {
    // Every session has a country, so `isNot XX` keeps them all: the union of every dense and sparse
    // sketch of the dimension holds the same registers as the project's own day sketches.
    const buckets = [START, START + DAY];
    const everything = await sessionMetrics(
      database.db,
      largeScope([is("country", "isNot", ["XX"])], true),
      buckets,
    );
    const unfiltered = await sessionMetrics(database.db, largeScope([], true), buckets);
    expect(unfiltered.approximate).toEqual(["unique_visitors"]);
    expect(everything).toEqual(unfiltered);
  });

  it("counts exactly where the window does not consist of whole days", async () => {
    const filtered = {
      ...largeScope([is("country", "is", ["SE"])], true),
      window: { start: START + HOUR, end: START + 2 * DAY },
    };
    const counted = await windowVisitors(database.db, filtered, [START + HOUR], EXACT_VISITORS_UP_TO + 1);
    const visitors = new Set<number>();
    for (let i = 1; i <= SESSIONS; i++) {
      if (country(i) === "SE" && i % 2880 >= 60) visitors.add(i % 18_000);
    }
    expect(counted).toEqual({
      counts: new Map([
        [0, visitors.size],
        [1, visitors.size],
      ]),
      approximate: false,
    });
  });
});
