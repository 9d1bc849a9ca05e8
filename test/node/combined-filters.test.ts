import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import { BREAKDOWN_DIMENSIONS } from "../../src/lib/dimensions";
import { assertValidRegexes } from "../../src/queries/filter-conditions";
import { sessionBreakdown } from "../../src/queries/insights/breakdowns";
import { dayParts } from "../../src/queries/insights/day-parts";
import { sessionMetrics } from "../../src/queries/insights/metrics";
import { bitStringFilters, type SessionScope } from "../../src/queries/insights/model";
import { PERFORMANCE_SORTS, pagePerformance } from "../../src/queries/insights/page-performance";
import { topPages } from "../../src/queries/insights/pages";
import { bitStringsCover } from "../../src/queries/insights/session-masks";
import { COVERED_FILTERS, is } from "../support/dimension-filter-cases";
import { createOrganization, type EventInput, insertEvents, uniqueId } from "../support/factories";
import { type FilterInput, parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import { pageRank, rankedPage, valueRank } from "../support/ranked-page";
import { generateTraffic } from "../support/traffic";

/**
 * Two and three filters at once, and one filter on several paths or event names, are answered
 * from the bit strings per day over sessions (src/queries/insights/session-bits.ts, page-bits.ts).
 * Each answer is held against the exact path over the same sessions: every operator the rollups
 * answer, combined with another filter, three filters, two on one dimension, and every breakdown
 * dimension and the top pages under each.
 */

const database = testDatabase();
afterAll(() => database.close());

const DAY = 86_400_000;
const FROM = Date.UTC(2026, 5, 1);
// Two weeks: long enough that the slices are summed in two parts of the window's days at once
// (day-parts.ts), which the first test below holds.
const TO = FROM + 14 * DAY;
const ALL_ROWS = { offset: 0, limit: 1_000 };

const projectId = uniqueId("combined-filters");

beforeAll(async () => {
  // A project row: its days are built in its timezone (UTC), as a deployed project's are.
  const organizationId = await createOrganization(database.db);
  await database.db.insert(projects).values({ id: projectId, organizationId, name: projectId });
  const traffic = generateTraffic({ projectId, seed: 52, sessions: 600, from: FROM, to: TO });
  await insertEvents(database.db, traffic as EventInput[]);
  // Statistics that know this project, as autovacuum has them minutes after a load. Run after the
  // HTTP tier's files, the shared database's statistics predate it: the planner then took its
  // window for one row and probed the window's sessions again for every page row of the exact
  // path (0.3-0.5 s a query instead of milliseconds; this file 227 s instead of 33 s).
  await database.db.execute(sql`analyze sessions, session_pages, session_names, events`);
});

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
  ["a path and a country", [is("path", "is", ["/pricing"]), is("country", "isNot", ["US"])]],
  [
    "either of two paths and a device",
    [is("path", "is", ["/pricing", "/cart"]), is("device", "is", ["desktop"])],
  ],
  ["a path containing o and an event name", [is("path", "contains", ["o"]), is("name", "is", ["purchase"])]],
  [
    "an event name, a path's start and a browser",
    [
      is("name", "startsWith", ["sign"]),
      is("path", "startsWith", ["/d"]),
      is("browser", "isNot", ["Chrome"]),
    ],
  ],
  // One filter the rollups do not answer: a session holding two of its paths or names would count twice.
  ["one filter on two paths", [is("path", "is", ["/pricing", "/cart"])]],
  ["one filter on paths containing a text", [is("path", "contains", ["ri"])]],
  ["one filter on event names by their start", [is("name", "startsWith", ["sig", "pur"])]],
  // Origins have strings only: one filter on them is answered from the strings too.
  ["one origin", [is("origin", "is", ["https://shop.example.com"])]],
  // Negations and "not set" on paths and origins: an event without one keeps its session.
  ["one filter on paths other than two", [is("path", "isNot", ["/pricing", "/cart"])]],
  ["a country and an event without a path", [is("country", "is", ["NO"]), is("path", "isNull")]],
  [
    "a path that does not contain a text, an origin other than one and a device",
    [
      is("path", "doesNotContain", ["o"]),
      is("origin", "isNot", ["https://example.com"]),
      is("device", "is", ["mobile"]),
    ],
  ],
  ["an event without an origin", [is("origin", "isNull")]],
  ["an origin set and a browser", [is("origin", "isNotNull"), is("browser", "isNot", ["Chrome"])]],
  [
    "an origin's text and a country",
    [is("origin", "contains", ["//example"]), is("country", "isNot", ["US"])],
  ],
  [
    "an origin, a path and a device",
    [is("origin", "endsWith", ["example.com"]), is("path", "is", ["/"]), is("device", "is", ["desktop"])],
  ],
  [
    "three filters with a prefix and text operators",
    [is("city", "startsWith", ["S"]), is("browser", "is", ["Safari"]), is("utm_medium", "isNull")],
  ],
  // A property's values have strings too (a session under each value its events hold there).
  ["one property value", [is("properties.plan", "is", ["pro"])]],
  ["a property value and a country", [is("properties.plan", "is", ["pro"]), is("country", "isNot", ["US"])]],
  // The other positive operators, over paths whose sessions hold no object or long text there.
  [
    "a property's text and a country",
    [is("properties.plan", "contains", ["pro"]), is("country", "isNot", ["US"])],
  ],
  [
    "a property's start, a comparison on another and a device",
    [
      is("properties.plan", "startsWith", ["f", "1"]),
      is("properties.price", "gt", [10]),
      is("device", "is", ["desktop"]),
    ],
  ],
  [
    "a property set and a regex on another",
    [is("properties.plan", "isNotNull"), is("properties.price", "regex", ["^4"])],
  ],
  ["one filter on a nested property's end", [is("properties.nested.variant", "endsWith", ["A"])]],
  [
    "either of two property values, a LIKE character among them, and a path",
    [is("properties.plan", "is", ["100%", "free"]), is("path", "is", ["/pricing"])],
  ],
  [
    "a nested property, a number as it is written and a device",
    [
      is("properties.nested.variant", "is", ["A"]),
      is("properties.price", "is", [49]),
      is("device", "is", ["desktop"]),
    ],
  ],
];

describe("which filters the bit strings answer", () => {
  it("two or three filters, or one on several paths or names or on origins, over whole days of a built window", async () => {
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
      [is("path", "is", ["/pricing"])],
      // "" is "not set" in the strings, so a value "" tells apart what they do not.
      [is("path", "isNot", ["/pricing", ""])],
      [is("country", "is", ["NO"]), is("origin", "is", [""])],
      // A property's strings answer its positive operators: not the negative ones, nor "".
      [is("properties.plan", "isNot", ["pro"])],
      [is("country", "is", ["NO"]), is("properties.plan", "doesNotContain", ["pro"])],
      [is("properties.plan", "isNull")],
      [is("properties.plan", "is", [""])],
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
    // Nor a window where a session holds an object at the path (`nested`): its text is not among
    // the values, so an operator that may match it (`contains`, `is` over an object's text) reads
    // the raw sessions. `is` over a plain value does not need to.
    for (const [filters, covered] of [
      [[is("properties.nested", "contains", ["A"]), is("country", "is", ["NO"])], false],
      [[is("properties.nested", "is", ['{"variant": "A"}'])], false],
      [[is("properties.nested", "is", ["A"])], true],
    ] as const) {
      const scope = await scopeOf([...filters], true);
      expect({ filters, combined: bitStringFilters(scope)?.length }).toEqual({
        filters,
        combined: filters.length,
      });
      expect({ filters, covered: await bitStringsCover(database.db, scope, []) }).toEqual({
        filters,
        covered,
      });
    }
    expect(bitStringFilters(await scopeOf(COMBINATIONS[0]?.[1] ?? [], false))).toBeUndefined();
    // A window that cuts a day is answered exactly.
    const cut = await scopeOf(COMBINATIONS[0]?.[1] ?? [], true, { start: FROM + 3_600_000, end: TO });
    expect(await bitStringsCover(database.db, cut, [])).toBe(false);
    // The window's slices are summed in two parts of its days, so every comparison below covers both.
    const window = { start: FROM, end: TO };
    expect(dayParts(window, "UTC")).toEqual([
      { ...window, days: days(FROM, TO).filter((_, index) => index % 2 === 0) },
      { ...window, days: days(FROM, TO).filter((_, index) => index % 2 === 1) },
    ]);
  });
});

const days = (start: number, end: number) =>
  Array.from({ length: Math.round((end - start) / DAY) }, (_, index) => start + index * DAY);

describe("metrics under two and three filters = the exact path", () => {
  for (const [label, filters] of COMBINATIONS) {
    it(`totals and series by day, exact visitors, ${label}`, async () => {
      const combined = await scopeOf(filters, true);
      const exactScope = await scopeOf(filters, false);
      const exact = await sessionMetrics(database.db, exactScope, days(FROM, TO));
      const answered = await sessionMetrics(database.db, combined, days(FROM, TO));
      expect(answered).toEqual(exact);
      expect(answered.approximate).toEqual([]);
      // The same in one bucket, and over the window's last three days by day.
      expect(await sessionMetrics(database.db, combined, [FROM])).toEqual(
        await sessionMetrics(database.db, exactScope, [FROM]),
      );
      const lastDays = { start: TO - 3 * DAY, end: TO };
      expect(
        await sessionMetrics(database.db, { ...combined, window: lastDays }, days(lastDays.start, TO)),
      ).toEqual(
        await sessionMetrics(database.db, { ...exactScope, window: lastDays }, days(lastDays.start, TO)),
      );
    });
  }

  it("a window that cuts a day, and hourly buckets, are answered exactly", async () => {
    const filters = COMBINATIONS[0]?.[1] ?? [];
    const exactScope = await scopeOf(filters, false);
    const combined = await scopeOf(filters, true);
    const hours = Array.from({ length: 24 }, (_, index) => FROM + index * 3_600_000);
    expect(
      await bitStringsCover(database.db, { ...combined, window: { start: FROM, end: FROM + DAY } }, hours),
    ).toBe(false);
    expect(
      await sessionMetrics(database.db, { ...combined, window: { start: FROM, end: FROM + DAY } }, hours),
    ).toEqual(
      await sessionMetrics(database.db, { ...exactScope, window: { start: FROM, end: FROM + DAY } }, hours),
    );
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
        expect({ dimension, page, answered: rankedPage(answered, page.limit, valueRank) }).toEqual({
          dimension,
          page,
          answered: rankedPage(all.slice(page.offset), page.limit, valueRank),
        });
      }
    }
  });

  it("small pages of every breakdown under every combination: the same rows as the exact path's", async () => {
    // The ranking counts every value's matching sessions and sums only the page's values, which
    // the rows after the page and the rows of an offset must not change.
    let compared = 0;
    for (const [label, filters] of COMBINATIONS) {
      const combined = await scopeOf(filters, true);
      const exactScope = await scopeOf(filters, false);
      for (const dimension of BREAKDOWN_DIMENSIONS) {
        const all = await sessionBreakdown(database.db, exactScope, dimension, ALL_ROWS);
        for (const page of [
          { offset: 0, limit: 1 },
          { offset: 2, limit: 2 },
        ]) {
          const answered = await sessionBreakdown(database.db, combined, dimension, page);
          const expected = all.slice(page.offset, page.offset + page.limit + 1);
          expect({ label, dimension, page, answered: rankedPage(answered, page.limit, valueRank) }).toEqual({
            label,
            dimension,
            page,
            answered: rankedPage(expected, page.limit, valueRank),
          });
          compared += expected.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(500);
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

describe("/pages under two and three filters = the exact path", () => {
  for (const [label, filters] of COMBINATIONS) {
    it(`top pages and page performance, ${label}`, async () => {
      const combined = await scopeOf(filters, true);
      const exactScope = await scopeOf(filters, false);
      const exact = await topPages(database.db, exactScope, ALL_ROWS);
      expect(exact.length).toBeGreaterThan(0);
      expect(await topPages(database.db, combined, ALL_ROWS)).toEqual(exact);
      for (const sortBy of PERFORMANCE_SORTS) {
        const request = { sortBy, sortOrder: "desc" as const, page: ALL_ROWS };
        expect({ sortBy, answered: await pagePerformance(database.db, combined, request) }).toEqual({
          sortBy,
          answered: await pagePerformance(database.db, exactScope, request),
        });
      }
    });
  }

  it("pages of /pages: the same rows, the same order, one more than the page", async () => {
    const filters = [is("country", "isNot", ["SE"]), is("device", "isNot", ["tablet"])];
    const combined = await scopeOf(filters, true);
    const all = await topPages(database.db, await scopeOf(filters, false), ALL_ROWS);
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const page of [
      { offset: 0, limit: 1 },
      { offset: 1, limit: 2 },
      { offset: all.length - 1, limit: 2 },
      { offset: all.length, limit: 2 },
    ]) {
      const answered = await topPages(database.db, combined, page);
      expect({ page, answered: rankedPage(answered, page.limit, pageRank) }).toEqual({
        page,
        answered: rankedPage(all.slice(page.offset), page.limit, pageRank),
      });
    }
  });

  it("reads the page strings: a string changed by hand changes the answer", async () => {
    const filters = [is("country", "isNot", ["SE"]), is("device", "isNot", ["tablet"])];
    const combined = await scopeOf(filters, true);
    const exact = await topPages(database.db, await scopeOf(filters, false), ALL_ROWS);
    const flip = (table: "page_day_bits" | "page_day_slices") =>
      database.db.execute(sql`
        update ${sql.identifier(table)} set sessions = ~sessions
        where project_id = ${projectId} and path = '/pricing' and day = ${new Date(FROM + DAY)}`);
    for (const table of ["page_day_bits", "page_day_slices"] as const) {
      await flip(table);
      try {
        expect({ table, tampered: await topPages(database.db, combined, ALL_ROWS) }).not.toEqual({
          table,
          tampered: exact,
        });
      } finally {
        await flip(table);
      }
    }
    expect(await topPages(database.db, combined, ALL_ROWS)).toEqual(exact);
  });

  it("a page's title is the greatest of its matching sessions', and a page without a path is a page", async () => {
    const titled = uniqueId("combined-titles");
    const organizationId = await createOrganization(database.db);
    await database.db.insert(projects).values({ id: titled, organizationId, name: titled });
    const at = (minute: number) => new Date(FROM + 10 * 3_600_000 + minute * 60_000);
    // [session, minute, country, device, path, title, duration]
    const VIEWS: Array<[string, number, string, string, string | null, string | null, number]> = [
      ["s1", 0, "NO", "mobile", "/x", "Alpha", 1_000],
      ["s1", 1, "NO", "mobile", "/x", "Alpha", 0],
      ["s1", 2, "NO", "mobile", null, "Nowhere", 300],
      ["s2", 0, "NO", "mobile", "/x", "Beta", 250],
      ["s3", 0, "SE", "mobile", "/x", "Zulu", 5_000],
      ["s4", 0, "NO", "desktop", "/x", "Yankee", 0],
    ];
    await insertEvents(
      database.db,
      VIEWS.map(([session, minute, country, device, path, title, duration]) => ({
        projectId: titled,
        sessionId: session,
        createdAt: at(minute),
        country,
        device,
        path,
        origin: path === null ? null : "https://example.com",
        title,
        duration,
      })),
    );
    const filters = parse([is("country", "is", ["NO"]), is("device", "is", ["mobile"])]);
    const combined: SessionScope = {
      projectId: titled,
      window: { start: FROM, end: FROM + DAY },
      filters,
      rollups: true,
      projectTimezone: "UTC",
    };
    expect(await bitStringsCover(database.db, combined, [])).toBe(true);
    const answered = await topPages(database.db, combined, ALL_ROWS);
    expect(
      answered.map(({ path, origin, title, sessions, pageviews }) => ({
        path,
        origin,
        title,
        sessions,
        pageviews,
      })),
    ).toEqual([
      { path: "/x", origin: "https://example.com", title: "Beta", sessions: 2, pageviews: 3 },
      { path: null, origin: null, title: "Nowhere", sessions: 1, pageviews: 1 },
    ]);
    // (1,000 + 250 ms) over two timed views.
    expect(answered[0]?.avg_duration).toBe(0.63);
    expect(answered).toEqual(await topPages(database.db, { ...combined, rollups: false }, ALL_ROWS));
  });
});

describe("visitors whose sessions of a day match the filters only between them", () => {
  const mixed = uniqueId("combined-mixed");
  const at = (day: number, hour: number) => new Date(FROM + day * DAY + hour * 3_600_000);
  // [visitor, session, day, hour, country, device]
  const SESSIONS: Array<[string, string, number, number, string, string]> = [
    // A: Norway on a desktop, Sweden on a phone: the strings see Norway and a phone that day.
    ["a", "a1", 0, 10, "NO", "desktop"],
    ["a", "a2", 0, 12, "SE", "mobile"],
    // B: Norway on a desktop, then Norway on a phone: matches.
    ["b", "b1", 0, 10, "NO", "desktop"],
    ["b", "b2", 0, 12, "NO", "mobile"],
    // C: like A on the first day, a match on the second.
    ["c", "c1", 0, 10, "NO", "desktop"],
    ["c", "c2", 0, 12, "SE", "mobile"],
    ["c", "c3", 1, 9, "NO", "mobile"],
    // D: one session that matches.
    ["d", "d1", 0, 15, "NO", "mobile"],
    // E: Sweden on a phone, Norway on a tablet, on the second day only.
    ["e", "e1", 1, 10, "SE", "mobile"],
    ["e", "e2", 1, 11, "NO", "tablet"],
  ];

  beforeAll(async () => {
    const organizationId = await createOrganization(database.db);
    await database.db.insert(projects).values({ id: mixed, organizationId, name: mixed });
    await insertEvents(
      database.db,
      SESSIONS.map(([visitor, session, day, hour, country, device]) => ({
        projectId: mixed,
        sessionId: session,
        profileId: visitor,
        createdAt: at(day, hour),
        country,
        device,
      })),
    );
  });

  it("are not counted: Norway on a phone is B and D on the first day, C on the second", async () => {
    const filters = parse([is("country", "is", ["NO"]), is("device", "is", ["mobile"])]);
    const window = { start: FROM, end: FROM + 2 * DAY };
    const combined: SessionScope = {
      projectId: mixed,
      window,
      filters,
      rollups: true,
      projectTimezone: "UTC",
    };
    expect(await bitStringsCover(database.db, combined, [FROM, FROM + DAY])).toBe(true);
    const answered = await sessionMetrics(database.db, combined, [FROM, FROM + DAY]);
    expect(answered.totals).toMatchObject({ total_sessions: 3, unique_visitors: 3 });
    expect(answered.series.map((point) => [point.total_sessions, point.unique_visitors])).toEqual([
      [2, 2],
      [1, 1],
    ]);
    expect(answered).toEqual(
      await sessionMetrics(database.db, { ...combined, rollups: false }, [FROM, FROM + DAY]),
    );
    // One bucket of both days: C is counted wrongly on the first day and rightly on the second of
    // the same bucket, so it counts once; A and E, wrong on their only day, do not.
    const twoDays = await sessionMetrics(database.db, combined, [FROM]);
    expect(twoDays.series.map((point) => [point.total_sessions, point.unique_visitors])).toEqual([[3, 3]]);
    expect(twoDays).toEqual(await sessionMetrics(database.db, { ...combined, rollups: false }, [FROM]));
    // A, B, C and E have two values of a filtered dimension in a day. Without the check the strings
    // alone would count A, B, C and D on the first day and C and E on the second.
    const listed = await database.db.execute<{ ordinal: number }>(
      sql`select distinct ordinal from visitor_day_mixed where project_id = ${mixed} and dimension in ('country', 'device')`,
    );
    expect(listed.rows).toHaveLength(4);
  });
});

describe("a breakdown and /pages count first the values with the most sessions, and still find a small one", () => {
  const skewed = uniqueId("combined-skewed");
  // Ten large cities of 30 sessions in Norway, three of them with one or two sessions on a phone;
  // "Zed" has 12 sessions in all, every one on a phone. (All in one country: a city's rows are
  // per city and country.) Each city's sessions see one page of their own, "/atlanta" to "/zed".
  const LARGE = ["Atlanta", "Bergen", "Cairo", "Dakar", "Essen", "Fes", "Graz", "Hue", "Ica", "Jena"];
  const MATCHED: Record<string, number> = { Atlanta: 2, Bergen: 2, Cairo: 1 };
  const sessions: Array<{ city: string; matches: boolean }> = [
    ...LARGE.flatMap((city) =>
      Array.from({ length: 30 }, (_, index) => ({ city, matches: index < (MATCHED[city] ?? 0) })),
    ),
    ...Array.from({ length: 12 }, () => ({ city: "Zed", matches: true })),
  ];
  const combined: SessionScope = {
    projectId: skewed,
    window: { start: FROM, end: FROM + DAY },
    filters: parse([is("country", "is", ["NO"]), is("device", "is", ["mobile"])]),
    rollups: true,
    projectTimezone: "UTC",
  };

  beforeAll(async () => {
    const organizationId = await createOrganization(database.db);
    await database.db.insert(projects).values({ id: skewed, organizationId, name: skewed });
    await insertEvents(
      database.db,
      sessions.map(({ city, matches }, index) => ({
        projectId: skewed,
        sessionId: `s${index}`,
        profileId: `v${index}`,
        createdAt: new Date(FROM + 3_600_000 + index * 1_000),
        city,
        path: `/${city.toLowerCase()}`,
        country: "NO",
        device: matches ? "mobile" : "desktop",
      })),
    );
  });

  it("a city of few sessions that all match ranks first, above the largest cities", async () => {
    // One row and one more: the eight values of the largest bounds (four per row needed) are
    // counted first, where Atlanta and Bergen match 2 each; another value is counted only with a
    // bound of 2 or more, which Zed (12) has.
    expect(await bitStringsCover(database.db, combined, [])).toBe(true);
    for (const page of [
      { offset: 0, limit: 1 },
      { offset: 1, limit: 2 },
    ]) {
      const answered = await sessionBreakdown(database.db, combined, "city", page);
      const exact = await sessionBreakdown(database.db, { ...combined, rollups: false }, "city", page);
      expect(rankedPage(answered, page.limit, valueRank)).toEqual(rankedPage(exact, page.limit, valueRank));
    }
    const first = await sessionBreakdown(database.db, combined, "city", { offset: 0, limit: 1 });
    expect(first.map(({ name, sessions }) => ({ name, sessions }))).toEqual([
      { name: "Zed", sessions: 12 },
      { name: "Atlanta", sessions: 2 },
    ]);
  });

  it("a page of few sessions that all match ranks first, above the largest pages", async () => {
    // The same for the cities' pages: /atlanta and /bergen match 2 each among the eight largest;
    // /zed (12) has a bound of 2 or more.
    for (const page of [
      { offset: 0, limit: 1 },
      { offset: 1, limit: 2 },
      { offset: 0, limit: 20 },
    ]) {
      const answered = await topPages(database.db, combined, page);
      const exact = await topPages(database.db, { ...combined, rollups: false }, page);
      expect(rankedPage(answered, page.limit, pageRank)).toEqual(rankedPage(exact, page.limit, pageRank));
    }
    const first = await topPages(database.db, combined, { offset: 0, limit: 1 });
    expect(first.map(({ path, sessions }) => ({ path, sessions }))).toEqual([
      { path: "/zed", sessions: 12 },
      { path: "/atlanta", sessions: 2 },
    ]);
  });
});
