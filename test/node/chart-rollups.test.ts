import { asc, eq, getTableColumns, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventPairRollups, eventRollups } from "../../src/db/schema";
import { CHART_PAIR_COLUMNS } from "../../src/lib/dimensions";
import { type Filter, resolveFilterField } from "../../src/lib/filter-parser";
import type { ChartSeriesQuery } from "../../src/queries/charts/model";
import type { DistinctSegment } from "../../src/queries/charts/new-members";
import { chartRollupSource, chartRollupsCover } from "../../src/queries/charts/rollups";
import { chartSeries } from "../../src/queries/charts/series";
import {
  CASES,
  caseColumns,
  chartQuery,
  DAY,
  FROM,
  HOUR,
  isDistinctCase,
  isPairCase,
  pinsEveryGroup,
  SHAPES,
  TO,
} from "../support/chart-rollup-cases";
import {
  createOrganization,
  createProject,
  type EventInput,
  insertEvents,
  uniqueId,
} from "../support/factories";
import { rawConnection, testDatabase } from "../support/node/database";
import { generateTraffic, shuffled } from "../support/traffic";
import { drizzleStatements, refreshUntilFolded } from "../support/watermarks";

/**
 * The event rollups against the exact path over the same events: the same chart series for every
 * additive segment, rolled-up breakdown and bucket shape, also while some events are not folded
 * in yet (they are read from `events`), and the same rollup rows whether the events arrived in
 * one batch or in shuffled small batches.
 */

const database = testDatabase();
afterAll(() => database.close());

// The cases and bucket shapes: test/support/chart-rollup-cases.ts.

function traffic(projectId: string): EventInput[] {
  return generateTraffic({ projectId, seed: 61, sessions: 300, from: FROM, to: TO }) as EventInput[];
}

const oneBatch = uniqueId("chart-batch");
const trickled = uniqueId("chart-trickle");

/** The project's events the rollups do not hold yet (at or above the watermark). */
async function waitingEvents(projectId: string): Promise<{ folded: number; waiting: number }> {
  const result = await database.db.execute<{ folded: number; waiting: number }>(sql`
    select count(*) filter (where ingest_xid < w.xid)::int as folded,
      count(*) filter (where ingest_xid >= w.xid)::int as waiting
    from events, (select processed_xid as xid from derived_state where name = 'event_rollups') w
    where project_id = ${projectId}`);
  return result.rows[0] ?? { folded: 0, waiting: 0 };
}

/** Refreshes until the rollups hold every event of the projects (rollup rows are compared whole). */
const foldIn = (...projectIds: string[]) =>
  refreshUntilFolded(drizzleStatements(database.db), ["event_rollups"], projectIds);

beforeAll(async () => {
  await insertEvents(database.db, traffic(oneBatch));
  const events = shuffled(traffic(trickled), 11);
  for (let i = 0; i < events.length; i += 200) {
    await insertEvents(database.db, events.slice(i, i + 200));
  }
  await foldIn(oneBatch, trickled);
});

/**
 * Compares both paths for every case and shape; returns how many groups were compared. A pair's
 * rows are per local day of the project's zone: they answer the shapes whose edges start such days
 * (`dayShapes`), and the others take the exact path.
 */
async function expectPathsAgree(
  projectId: string,
  shapes: ReadonlyArray<(typeof SHAPES)[number]> = SHAPES,
  dayShapes = (shape: (typeof SHAPES)[number]) => shape[3] % DAY === 0,
): Promise<number> {
  let groups = 0;
  // Every case must count something in some shape, or its comparison proves nothing.
  const empty = new Set(CASES);
  for (const shape of shapes) {
    for (const item of CASES) {
      const rolledQuery = chartQuery(projectId, item, shape, true);
      const answered = (await chartRollupSource(database.db, rolledQuery)) !== undefined;
      // The hour rows answer shapes of whole UTC hours, a pair's day rows those of local days, and
      // the distinct counts of the day rows those of one local day a bucket.
      const [, start, end, step] = shape;
      const wholeHours = [start, end, step].every((instant) => instant % HOUR === 0);
      const expected = isDistinctCase(item)
        ? pinsEveryGroup(item) && !caseColumns(item).has("path") && dayShapes(shape) && step === DAY
        : isPairCase(item)
          ? dayShapes(shape)
          : wholeHours;
      expect({ shape: shape[0], ...item, answered }).toEqual({
        shape: shape[0],
        ...item,
        answered: expected,
      });
      const rolled = await chartSeries(database.db, rolledQuery);
      const exact = await chartSeries(database.db, chartQuery(projectId, item, shape, false));
      groups += exact.groups.length;
      const counted = item.breakdown
        ? exact.groups.length > 0
        : exact.groups.some((group) => group.current.some((value) => Number(value) !== 0));
      if (counted) empty.delete(item);
      expect({ shape: shape[0], ...item, result: rolled }).toEqual({
        shape: shape[0],
        ...item,
        result: exact,
      });
    }
  }
  expect([...empty]).toEqual([]);
  return groups;
}

describe("rollup path = exact path", () => {
  it("for every additive segment, rolled-up breakdown and bucket shape", async () => {
    const groups = await expectPathsAgree(oneBatch);
    expect(groups).toBeGreaterThan(100);
  });

  it("while events are waiting for the next refresh (they are read from events)", async () => {
    const projectId = uniqueId("chart-pending");
    const events = shuffled(traffic(projectId), 5);
    const folded = events.slice(0, Math.floor(events.length / 2));
    const pending = events.slice(folded.length);
    await insertEvents(database.db, folded);
    // Half of the events arrive after the refresh: the paths must agree with them waiting.
    expect(pending.length).toBeGreaterThan(300);
    await foldIn(projectId);
    // The refresh lock, held on another connection, keeps every other test's refresh from folding
    // the pending events in while the paths are compared.
    const lock = await rawConnection();
    try {
      await lock.query("select pg_advisory_lock(hashtext('refresh_derived'))");
      await insertEvents(database.db, pending, { refresh: false });
      expect(await waitingEvents(projectId)).toEqual({ folded: folded.length, waiting: pending.length });
      await expectPathsAgree(projectId);
    } finally {
      await lock.query("select pg_advisory_unlock(hashtext('refresh_derived'))");
      await lock.end();
    }
  });

  it("leaves distinct counts of several rows, other filters, two breakdowns and minute edges to the exact path", () => {
    const shape = SHAPES[1] as (typeof SHAPES)[number];
    const base = chartQuery(oneBatch, { segment: "event", event: "*" }, shape, true);
    const field = (name: string) =>
      resolveFilterField(name) as NonNullable<ReturnType<typeof resolveFilterField>>;
    expect(chartRollupsCover(base)).toBe(true);
    expect(chartRollupsCover({ ...base, rollups: false })).toBe(false);
    // Every event name at once: a visitor of two names would be counted twice.
    for (const segment of ["user", "session", "user_average", "one_event_per_user"] as const) {
      expect({ segment, covered: chartRollupsCover({ ...base, segment }) }).toEqual({
        segment,
        covered: false,
      });
    }
    for (const segment of ["user", "session"] as const) {
      expect(chartRollupsCover({ ...base, segment, event: "screen_view" })).toBe(true);
    }
    for (const segment of ["user_average", "one_event_per_user"] as const) {
      expect(chartRollupsCover({ ...base, segment, event: "screen_view" })).toBe(false);
    }
    expect(chartRollupsCover({ ...base, segment: "property_sum", property: field("properties.plan") })).toBe(
      false,
    );
    const filter = (name: string, operator: Filter["operator"], values: string[]): Filter => ({
      field: field(name),
      operator,
      values,
      index: 0,
    });
    const chrome = filter("browser", "is", ["Chrome"]);
    expect(chartRollupsCover({ ...base, filters: [chrome] })).toBe(true);
    expect(chartRollupsCover({ ...base, filters: [filter("browser", "contains", ["Chr"])] })).toBe(true);
    for (const filters of [
      [filter("browser", "regex", ["^Chr"])],
      [filter("browser", "isNot", ["Chrome", ""])],
      [filter("browser", "is", ["Chrome", ""])],
      [filter("city", "is", ["Oslo"])],
      [filter("properties.plan", "is", ["pro"])],
      [chrome, filter("os", "regex", ["^Win"])],
    ]) {
      expect({ filters, covered: chartRollupsCover({ ...base, filters }) }).toEqual({
        filters,
        covered: false,
      });
    }
    // A filter and a breakdown of another column: the rows of their pair, when it has rows.
    expect(chartRollupsCover({ ...base, filters: [chrome], breakdowns: [field("os")] })).toBe(true);
    expect(chartRollupsCover({ ...base, filters: [chrome], breakdowns: [field("browser")] })).toBe(true);
    expect(chartRollupsCover({ ...base, filters: [chrome, filter("os", "is", ["Windows"])] })).toBe(true);
    for (const [filters, breakdown] of [
      // Three columns: no rows carry them together.
      [[chrome, filter("os", "is", ["Windows"])], "country"],
      [[chrome, filter("os", "is", ["Windows"]), filter("country", "is", ["NO"])], undefined],
      // `path` has no pairs: its values are many.
      [[chrome], "path"],
      [[filter("path", "is", ["/pricing"])], "country"],
      [[filter("path", "is", ["/pricing"]), chrome], undefined],
    ] as Array<[Filter[], string | undefined]>) {
      const breakdowns = breakdown === undefined ? [] : [field(breakdown)];
      expect({ filters, breakdown, covered: chartRollupsCover({ ...base, filters, breakdowns }) }).toEqual({
        filters,
        breakdown,
        covered: false,
      });
    }
    expect(chartRollupsCover({ ...base, breakdowns: [field("browser"), field("os")] })).toBe(false);
    expect(chartRollupsCover({ ...base, breakdowns: [field("properties.plan")] })).toBe(false);
    for (const name of ["profile_id", "city", "os_version", "referrer"]) {
      expect({ name, covered: chartRollupsCover({ ...base, breakdowns: [field(name)] }) }).toEqual({
        name,
        covered: false,
      });
    }
    const start = FROM + 30 * 60_000;
    expect(chartRollupsCover({ ...base, current: { window: { start, end: TO }, buckets: [start] } })).toBe(
      false,
    );
    expect(
      chartRollupsCover({
        ...base,
        current: { window: { start: FROM, end: TO }, buckets: [FROM, FROM + 90 * 60_000] },
      }),
    ).toBe(false);
  });
});

describe("pair rows per local day", () => {
  /** Refreshes until the project's pair rows are built in `timeZone`. */
  async function builtIn(projectId: string, timeZone: string): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      await foldIn(projectId);
      const result = await database.db.execute<{ timezone: string }>(
        sql`select timezone from event_pair_timezones where project_id = ${projectId}`,
      );
      if (result.rows[0]?.timezone === timeZone) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`the pair rows were never built in ${timeZone}`);
  }

  /** Day shapes starting at local midnights `offset` ms before UTC's. */
  const localShapes = (zone: string, offset: number): Array<(typeof SHAPES)[number]> => [
    [`${zone}: three days by day, with the three before`, FROM - offset + 4 * DAY, TO - offset, DAY, true],
    [`${zone}: the week by day`, FROM - offset, TO - offset, DAY, false],
  ];

  it("answer in the project's zone, and again in its new zone after it changed", async () => {
    const projectId = await createProject(database.db, await createOrganization(database.db), {
      timezone: "Asia/Kolkata",
    });
    await insertEvents(database.db, traffic(projectId));
    await builtIn(projectId, "Asia/Kolkata");
    const kolkata = localShapes("Kolkata", 5.5 * HOUR);
    // UTC midnights are not Kolkata's: the pairs' cases of those take the exact path.
    const utcDays = SHAPES[1] as (typeof SHAPES)[number];
    await expectPathsAgree(projectId, [...kolkata, utcDays], (shape) => shape !== utcDays);

    await database.db.execute(sql`update projects set timezone = 'Europe/Oslo' where id = ${projectId}`);
    // Until a refresh builds them again, the rows of the old zone answer no series.
    const pairCases = CASES.filter(isPairCase);
    expect(pairCases.length).toBeGreaterThan(3);
    for (const item of pairCases) {
      const query = chartQuery(projectId, item, kolkata[0] as (typeof SHAPES)[number], true);
      expect({ ...item, source: await chartRollupSource(database.db, query) }).toEqual({
        ...item,
        source: undefined,
      });
    }
    await builtIn(projectId, "Europe/Oslo");
    const oslo = localShapes("Oslo", 2 * HOUR);
    await expectPathsAgree(projectId, [...oslo, ...kolkata], (shape) => oslo.includes(shape));
  });
});

describe("incremental maintenance", () => {
  async function rollupRows(projectId: string) {
    const { projectId: _projectId, ...columns } = getTableColumns(eventRollups);
    return database.db
      .select(columns)
      .from(eventRollups)
      .where(eq(eventRollups.projectId, projectId))
      .orderBy(
        asc(eventRollups.hour),
        sql`${eventRollups.name} collate "C"`,
        asc(eventRollups.dimension),
        sql`${eventRollups.value} collate "C" nulls last`,
      );
  }

  it("shuffled small batches leave exactly the rollups of one batch", async () => {
    const batch = await rollupRows(oneBatch);
    expect(batch.length).toBeGreaterThan(1_000);
    // One row per (hour, name) without a dimension, and every event counted once in it.
    const totals = batch.filter((row) => row.dimension === "");
    expect(totals.reduce((sum, row) => sum + row.events, 0)).toBe(traffic(oneBatch).length);
    expect(await rollupRows(trickled)).toEqual(batch);
  });

  async function pairRows(projectId: string) {
    const { projectId: _projectId, ...columns } = getTableColumns(eventPairRollups);
    return database.db
      .select(columns)
      .from(eventPairRollups)
      .where(eq(eventPairRollups.projectId, projectId))
      .orderBy(
        asc(eventPairRollups.dimension),
        asc(eventPairRollups.byDimension),
        asc(eventPairRollups.day),
        sql`${eventPairRollups.name} collate "C"`,
        sql`${eventPairRollups.value} collate "C" nulls last`,
        sql`${eventPairRollups.byValue} collate "C" nulls last`,
      );
  }

  /** Every kind of day row: each pair of columns, each column alone, the event name alone. */
  const ROW_KINDS: Array<[string, string]> = [
    ...CHART_PAIR_COLUMNS.flatMap((first, i) =>
      CHART_PAIR_COLUMNS.slice(i + 1).map((second): [string, string] => [first, second]),
    ),
    ...CHART_PAIR_COLUMNS.map((column): [string, string] => [column, ""]),
    ["", ""],
  ];

  it("keeps every kind of day row once, each counting every event, the same trickled as in one batch", async () => {
    const batch = await pairRows(oneBatch);
    const kinds = new Map<string, number>();
    for (const row of batch) {
      const kind = `${row.dimension}|${row.byDimension}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + row.events);
    }
    const expected = ROW_KINDS.map(([first, second]): [string, number] => [
      `${first}|${second}`,
      traffic(oneBatch).length,
    ]);
    expect([...kinds.entries()].sort()).toEqual(expected.sort());
    expect(await pairRows(trickled)).toEqual(batch);
  });

  it("counts in each day row the distinct visitors and sessions of its day, name and values", async () => {
    // The events' own values, "" and null alike not set; the project has no zone, so days are UTC's.
    const FIELDS: Record<string, keyof EventInput> = {
      country: "country",
      device: "device",
      browser: "browser",
      os: "os",
      referrer_name: "referrerName",
      referrer_type: "referrerType",
      utm_source: "utmSource",
      utm_medium: "utmMedium",
      utm_campaign: "utmCampaign",
    };
    const columnValue = (event: EventInput, column: string) => {
      const field = FIELDS[column];
      return field === undefined ? null : (event[field] as string | null | undefined) || null;
    };
    const members = new Map<string, { profiles: Set<string>; sessions: Set<string> }>();
    // The refresh counts a member of one combination of values per day and name apart from one of
    // several (src/db/routines/refresh_event_pair_rollups.sql): the traffic holds both kinds.
    const combinations = new Map<string, Set<string>>();
    for (const event of traffic(oneBatch)) {
      const day = (event.createdAt as Date).toISOString().slice(0, 10);
      const member = JSON.stringify([day, event.name, event.profileId]);
      const values = JSON.stringify(CHART_PAIR_COLUMNS.map((column) => columnValue(event, column)));
      combinations.set(member, (combinations.get(member) ?? new Set<string>()).add(values));
    }
    const several = [...combinations.values()].filter((values) => values.size > 1).length;
    expect(several).toBeGreaterThan(5);
    expect(combinations.size - several).toBeGreaterThan(100);
    for (const event of traffic(oneBatch)) {
      const day = (event.createdAt as Date).toISOString().slice(0, 10);
      for (const [first, second] of ROW_KINDS) {
        const key = JSON.stringify([
          first,
          second,
          day,
          event.name,
          columnValue(event, first),
          columnValue(event, second),
        ]);
        const row = members.get(key) ?? { profiles: new Set<string>(), sessions: new Set<string>() };
        row.profiles.add(String(event.profileId));
        row.sessions.add(String(event.sessionId));
        members.set(key, row);
      }
    }
    const expected = [...members.entries()]
      .map(([key, row]) => [key, row.profiles.size, row.sessions.size])
      .sort();
    const stored = (await pairRows(oneBatch))
      .map((row) => [
        JSON.stringify([row.dimension, row.byDimension, row.day, row.name, row.value, row.byValue]),
        row.profiles,
        row.sessions,
      ])
      .sort();
    expect(stored).toEqual(expected);
  });
});

describe("distinct members per day where midnight happens twice", () => {
  it("count a visitor and a session of the repeated hour once, in the day of its local date", async () => {
    // Havana falls back from 01:00 to 00:00 on 2025-11-02, and Postgres resolves that date's
    // midnight to the second pass (05:00 UTC): ana's first event (04:30 UTC, November 2) comes
    // before it, cy's (04:40 UTC, also November 2) within November 1's range as resolved. The
    // second batch brings one more event of each: ana must count once on November 2, cy on both
    // days, in charts while the batch waits for the refresh and in the day rows after it.
    const organization = await createOrganization(database.db);
    const havana = await createProject(database.db, organization, { timezone: "America/Havana" });
    const event = (sessionId: string, profileId: string, at: string): EventInput => ({
      projectId: havana,
      sessionId,
      profileId,
      name: "screen_view",
      createdAt: new Date(at),
    });
    await insertEvents(database.db, [
      event("a", "ana", "2025-11-02T04:30:00Z"),
      event("c", "cy", "2025-11-02T04:40:00Z"),
    ]);
    await foldIn(havana);
    const second = [event("a", "ana", "2025-11-02T12:00:00Z"), event("c", "cy", "2025-11-01T20:00:00Z")];
    // November 1 and 2 by day: their first midnights (04:00 UTC both), and November 3's (05:00).
    const days = [Date.parse("2025-11-01T04:00:00Z"), Date.parse("2025-11-02T04:00:00Z")];
    const chart = (segment: DistinctSegment, rollups: boolean): ChartSeriesQuery => ({
      projectId: havana,
      event: "screen_view",
      segment,
      filters: [],
      breakdowns: [],
      limit: 50,
      current: {
        window: { start: days[0] as number, end: Date.parse("2025-11-03T05:00:00Z") },
        buckets: days,
      },
      rollups,
    });
    const lock = await rawConnection();
    try {
      // The refresh lock keeps every refresh from folding the second batch in meanwhile.
      await lock.query("select pg_advisory_lock(hashtext('refresh_derived'))");
      await insertEvents(database.db, second, { refresh: false });
      for (const segment of ["user", "session"] as const) {
        expect(await chartRollupSource(database.db, chart(segment, true))).toBeDefined();
        const exact = await chartSeries(database.db, chart(segment, false));
        expect(exact.groups.map((group) => group.current.map(Number))).toEqual([[1, 2]]);
        expect({ segment, result: await chartSeries(database.db, chart(segment, true)) }).toEqual({
          segment,
          result: exact,
        });
      }
    } finally {
      await lock.query("select pg_advisory_unlock(hashtext('refresh_derived'))");
      await lock.end();
    }
    await foldIn(havana);
    const rows = await database.db
      .select({
        day: eventPairRollups.day,
        events: eventPairRollups.events,
        profiles: eventPairRollups.profiles,
        sessions: eventPairRollups.sessions,
      })
      .from(eventPairRollups)
      .where(
        sql`${eventPairRollups.projectId} = ${havana} and ${eventPairRollups.dimension} = '' and ${eventPairRollups.byDimension} = ''`,
      )
      .orderBy(asc(eventPairRollups.day));
    expect(rows).toEqual([
      { day: "2025-11-01", events: 1, profiles: 1, sessions: 1 },
      { day: "2025-11-02", events: 3, profiles: 2, sessions: 2 },
    ]);
  });
});
