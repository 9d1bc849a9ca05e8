import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import { BREAKDOWN_DIMENSIONS } from "../../src/lib/dimensions";
import { assertValidRegexes } from "../../src/queries/filter-conditions";
import { sessionBreakdown } from "../../src/queries/insights/breakdowns";
import { bitStringFilters, type SessionScope } from "../../src/queries/insights/model";
import { bitStringsCover } from "../../src/queries/insights/session-bits";
import { COVERED_FILTERS, is } from "../support/dimension-filter-cases";
import { createOrganization, type EventInput, insertEvents, uniqueId } from "../support/factories";
import { type FilterInput, parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import { generateTraffic } from "../support/traffic";

/**
 * Two and three filters at once are answered from the bit strings per day over sessions
 * (src/queries/insights/session-bits.ts). Each answer is held against the exact path over the
 * same sessions: every operator the rollups answer, combined with another filter, three filters,
 * two on one dimension, and every breakdown dimension under each.
 */

const database = testDatabase();
afterAll(() => database.close());

const DAY = 86_400_000;
const FROM = Date.UTC(2026, 5, 1);
const TO = FROM + 7 * DAY;
const ALL_ROWS = { offset: 0, limit: 1_000 };

const projectId = uniqueId("combined-filters");

beforeAll(async () => {
  // A project row: its days are built in its timezone (UTC), as a deployed project's are.
  const organizationId = await createOrganization(database.db);
  await database.db.insert(projects).values({ id: projectId, organizationId, name: projectId });
  const traffic = generateTraffic({ projectId, seed: 52, sessions: 600, from: FROM, to: TO });
  await insertEvents(database.db, traffic as EventInput[]);
}, 120_000);

/** The scope as a route builds it: Postgres says whether a regex pattern matches the empty text. */
async function scopeOf(filters: FilterInput[], rollups: boolean, window = { start: FROM, end: TO }) {
  const parsed = parse(filters);
  const regexMatchesEmpty = await assertValidRegexes(database.db, parsed);
  const scope: SessionScope = {
    projectId,
    window,
    filters: parsed,
    rollups,
    projectTimezone: "UTC",
    regexMatchesEmpty,
  };
  return scope;
}

// A second filter for each operator of COVERED_FILTERS, in turn: selective, on another dimension.
const SECOND: FilterInput[] = [
  is("device", "is", ["mobile"]),
  is("browser", "isNot", ["Chrome"]),
  is("utm_source", "isNull"),
  is("os", "contains", ["i"]),
];

const COMBINATIONS: Array<[string, FilterInput[]]> = [
  ...COVERED_FILTERS.map(([label, filter], index): [string, FilterInput[]] => {
    const second = SECOND[index % SECOND.length] as FilterInput;
    return [`${label} and ${second.name} ${second.operator}`, [filter, second]];
  }),
  ["two filters on one dimension", [is("country", "isNot", ["US"]), is("country", "isNotNull")]],
  ["a regex and a filter", [is("country", "regex", ["^(NO|SE)$"]), is("device", "is", ["desktop"])]],
  [
    "three filters",
    [is("country", "is", ["NO", "SE"]), is("device", "is", ["mobile"]), is("referrer_type", "isNotNull")],
  ],
  [
    "three filters with a prefix and text operators",
    [is("city", "startsWith", ["S"]), is("browser", "is", ["Safari"]), is("utm_medium", "isNull")],
  ],
];

describe("which filters the bit strings answer", () => {
  it("two or three filters on breakdown dimensions, whole days of a built window", async () => {
    for (const [label, filters] of COMBINATIONS) {
      const scope = await scopeOf(filters, true);
      expect({ label, combined: bitStringFilters(scope)?.length }).toEqual({
        label,
        combined: filters.length,
      });
      expect({ label, covered: await bitStringsCover(database.db, scope, []) }).toEqual({
        label,
        covered: true,
      });
    }
    const not: FilterInput[][] = [
      [is("country", "is", ["NO"])],
      [is("country", "is", ["NO"]), is("path", "is", ["/pricing"])],
      [is("country", "is", ["NO"]), is("properties.plan", "is", ["pro"])],
      [is("country", "is", ["NO", ""]), is("device", "is", ["mobile"])],
      [is("referrer_name", "regex", ["^$|^Goo"]), is("device", "is", ["mobile"])],
      [
        is("country", "is", ["NO"]),
        is("device", "is", ["mobile"]),
        is("os", "is", ["iOS"]),
        is("browser", "is", ["Safari"]),
      ],
    ];
    for (const filters of not) {
      expect({ filters, combined: bitStringFilters(await scopeOf(filters, true)) }).toEqual({
        filters,
        combined: undefined,
      });
    }
    expect(bitStringFilters(await scopeOf(COMBINATIONS[0]?.[1] ?? [], false))).toBeUndefined();
    // A window that cuts a day is answered exactly.
    const cut = await scopeOf(COMBINATIONS[0]?.[1] ?? [], true, { start: FROM + 3_600_000, end: TO });
    expect(await bitStringsCover(database.db, cut, [])).toBe(false);
  });
});

describe("breakdowns under two and three filters = the exact path", () => {
  for (const [label, filters] of COMBINATIONS) {
    it(`every breakdown, ${label}`, async () => {
      const combined = await scopeOf(filters, true);
      const exactScope = await scopeOf(filters, false);
      let rows = 0;
      for (const dimension of BREAKDOWN_DIMENSIONS) {
        const exact = await sessionBreakdown(database.db, exactScope, dimension, ALL_ROWS);
        const answered = await sessionBreakdown(database.db, combined, dimension, ALL_ROWS);
        expect({ dimension, answered }).toEqual({ dimension, answered: exact });
        rows += exact.length;
      }
      expect(rows).toBeGreaterThan(0);
    });
  }

  it("pages of a breakdown: the same rows, the same order, one more than the page", async () => {
    const filters = [is("country", "isNot", ["SE"]), is("device", "isNot", ["tablet"])];
    const combined = await scopeOf(filters, true);
    const exactScope = await scopeOf(filters, false);
    for (const dimension of ["city", "os_version", "referrer"] as const) {
      const all = await sessionBreakdown(database.db, exactScope, dimension, ALL_ROWS);
      expect(all.length).toBeGreaterThanOrEqual(3);
      for (const page of [
        { offset: 0, limit: 1 },
        { offset: 1, limit: 1 },
        { offset: all.length - 1, limit: 2 },
      ]) {
        const answered = await sessionBreakdown(database.db, combined, dimension, page);
        expect({ dimension, page, answered }).toEqual({
          dimension,
          page,
          answered: all.slice(page.offset, page.offset + page.limit + 1),
        });
      }
    }
  });

  it("reads the strings: a string changed by hand changes the answer", async () => {
    const filters = [is("country", "is", ["NO"]), is("device", "is", ["mobile"])];
    const combined = await scopeOf(filters, true);
    const before = await sessionBreakdown(database.db, combined, "browser", ALL_ROWS);
    const exact = await sessionBreakdown(database.db, await scopeOf(filters, false), "browser", ALL_ROWS);
    expect(before).toEqual(exact);
    const flip = (direction: string) =>
      database.db.execute(sql`
        update session_day_bits set sessions = ~sessions
        where project_id = ${projectId} and dimension = 'device' and name = 'mobile' and day = ${new Date(FROM + DAY)}
        returning ${direction} as done`);
    await flip("on");
    try {
      const tampered = await sessionBreakdown(database.db, combined, "browser", ALL_ROWS);
      expect(tampered).not.toEqual(exact);
    } finally {
      await flip("off");
    }
    expect(await sessionBreakdown(database.db, combined, "browser", ALL_ROWS)).toEqual(exact);
  });
});
