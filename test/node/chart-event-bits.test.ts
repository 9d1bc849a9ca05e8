import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Filter } from "../../src/lib/filter-parser";
import { bucketParts } from "../../src/queries/charts/bucket-parts";
import { eventBitsCover, eventBitsSource } from "../../src/queries/charts/event-bits";
import { eventFirstsCover } from "../../src/queries/charts/event-firsts";
import type { ChartSegment, ChartSeriesQuery } from "../../src/queries/charts/model";
import { chartRollupSource } from "../../src/queries/charts/rollups";
import { chartSeries } from "../../src/queries/charts/series";
import { chartField, chartWindows } from "../support/chart-rollup-cases";
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
 * The bit strings per day over the day's events (src/db/routines/refresh_event_bits.sql) against
 * the exact path over the same events: a chart's event, user and session segments filtered on two
 * or three columns, with or without a breakdown of a third, are the same from both (the distinct
 * counts through the members kept beside the strings, event_day_members), whatever order the events
 * arrived in, while some are not folded in yet, and in the project's zone before and after it
 * changes. The strings answer only where the rollups' pairs do not and every edge starts a day.
 */

const database = testDatabase();
afterAll(() => database.close());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FROM = Date.UTC(2026, 4, 4);
const TO = Date.UTC(2026, 4, 11);

const traffic = (projectId: string): EventInput[] =>
  generateTraffic({ projectId, seed: 83, sessions: 400, from: FROM, to: TO }) as EventInput[];

const foldIn = (...projectIds: string[]) =>
  refreshUntilFolded(drizzleStatements(database.db), ["event_rollups"], projectIds);

const oneBatch = uniqueId("bits-batch");
const trickled = uniqueId("bits-trickle");

beforeAll(async () => {
  await insertEvents(database.db, traffic(oneBatch));
  const events = shuffled(traffic(trickled), 17);
  for (let i = 0; i < events.length; i += 250) {
    await insertEvents(database.db, events.slice(i, i + 250), { refresh: false });
    if (i % 1_000 === 0) await foldIn(trickled);
  }
  await foldIn(oneBatch, trickled);
});

type FilterSpec = [string, Array<string | number>, Filter["operator"]?];

interface Case {
  event: string;
  breakdown?: string;
  filters: FilterSpec[];
}

/** Every case has more columns (besides the name) than a pair of rollup rows carries, or three filters. */
const CASES: Case[] = [
  {
    event: "screen_view",
    breakdown: "browser",
    filters: [
      ["country", ["NO"]],
      ["device", ["desktop"], "isNot"],
    ],
  },
  {
    event: "*",
    filters: [
      ["browser", ["Chr"], "contains"],
      ["os", ["Windows", "macOS"]],
      ["referrer_name", [], "isNull"],
    ],
  },
  {
    event: "*",
    breakdown: "referrer_type",
    filters: [
      ["utm_source", [], "isNotNull"],
      ["country", ["N", "S"], "startsWith"],
    ],
  },
  {
    event: "*",
    breakdown: "country",
    filters: [
      ["name", ["screen_view", "purchase"]],
      ["device", ["mobile"]],
      ["os", ["OS"], "doesNotContain"],
    ],
  },
  {
    event: "*",
    breakdown: "os",
    filters: [
      ["country", ["NO", "SE"], "isNot"],
      ["browser", ["Chrome"]],
    ],
  },
  {
    event: "*",
    breakdown: "name",
    filters: [
      ["country", ["NO", "SE"], "isNot"],
      ["browser", ["Chrome"]],
      ["device", ["mobile"]],
    ],
  },
  {
    event: "purchase",
    breakdown: "utm_campaign",
    filters: [
      ["device", ["desktop"]],
      ["os", ["s"], "endsWith"],
    ],
  },
  // Property values have strings too: a property alone, with a column, or two of them.
  {
    event: "*",
    breakdown: "browser",
    filters: [["properties.plan", ["pro", "100%"]]],
  },
  {
    event: "purchase",
    breakdown: "country",
    filters: [
      ["properties.plan", ["pro"], "startsWith"],
      ["properties.price", [10], "gt"],
    ],
  },
  {
    event: "*",
    breakdown: "device",
    filters: [
      ["properties.nested.variant", ["A"]],
      ["country", ["NO"], "isNot"],
    ],
  },
  // Two filters on one column and one on another, and the breakdown of a third.
  {
    event: "screen_view",
    breakdown: "device",
    filters: [
      ["country", ["NO"], "isNot"],
      ["country", [], "isNotNull"],
      ["browser", ["Firefox", "Safari"]],
    ],
  },
];

/** [label, start, end, step, previous, answered by the strings in UTC] */
type Shape = [string, number, number, number, boolean, boolean];

const SHAPES: Shape[] = [
  ["three days by day, with the three before", FROM + 4 * DAY, TO, DAY, true, true],
  ["the week by day", FROM, TO, DAY, false, true],
  ["six days by two days", FROM, FROM + 6 * DAY, 2 * DAY, false, true],
  ["the week as one bucket, with the week before", FROM, TO, 7 * DAY, true, true],
  // Long enough for the distinct members to be counted in parts of whole buckets at once.
  ["two weeks by day, with the two before", TO - 14 * DAY, TO, DAY, true, true],
  ["two weeks by week", FROM - 7 * DAY, TO, 7 * DAY, false, true],
  ["one day by hour", FROM + 3 * DAY, FROM + 4 * DAY, HOUR, false, false],
];

/** The segments the strings answer. */
const SEGMENTS: ChartSegment[] = ["event", "user", "session"];

function chartQuery(
  projectId: string,
  item: Case,
  shape: Shape,
  rollups: boolean,
  segment: ChartSegment = "event",
): ChartSeriesQuery {
  const [, start, end, step, previous] = shape;
  return {
    projectId,
    event: item.event,
    segment,
    filters: item.filters.map(([name, values, operator], index) => ({
      field: chartField(name),
      operator: operator ?? "is",
      values,
      index,
    })),
    breakdowns: item.breakdown === undefined ? [] : [chartField(item.breakdown)],
    limit: 50,
    ...chartWindows(start, end, step, previous),
    rollups,
  };
}

/**
 * Compares the strings' answers with the exact path's for every case, shape and segment; returns
 * the groups compared and how many of the strings' distinct counts were read in parts.
 */
async function expectPathsAgree(
  projectId: string,
  shapes: Shape[],
  segments = SEGMENTS,
): Promise<{ groups: number; parted: number }> {
  let groups = 0;
  let parted = 0;
  const empty = new Set(CASES);
  for (const shape of shapes) {
    for (const [item, segment] of CASES.flatMap((item) =>
      segments.map((segment) => [item, segment] as const),
    )) {
      const query = chartQuery(projectId, item, shape, true, segment);
      // Never a pair's rows: the strings, or for edges within a day the exact path.
      expect(await chartRollupSource(database.db, query)).toBeUndefined();
      const source = await eventBitsSource(database.db, query);
      const answered = source !== undefined;
      if (source && segment !== "event" && bucketParts(query, source.timeZone)) parted++;
      expect({ shape: shape[0], segment, ...item, answered }).toEqual({
        shape: shape[0],
        segment,
        ...item,
        answered: shape[5],
      });
      const fromStrings = await chartSeries(database.db, query);
      const exact = await chartSeries(database.db, chartQuery(projectId, item, shape, false, segment));
      groups += exact.groups.length;
      if (exact.groups.some((group) => group.current.some((value) => Number(value) !== 0)))
        empty.delete(item);
      expect({ shape: shape[0], segment, ...item, result: fromStrings }).toEqual({
        shape: shape[0],
        segment,
        ...item,
        result: exact,
      });
    }
  }
  // Every case counts something somewhere, or its comparison proves nothing.
  expect([...empty]).toEqual([]);
  return { groups, parted };
}

/** Per (day, column, value), the events the project's strings count: the same however they were numbered. */
async function stringCounts(projectId: string) {
  const result = await database.db.execute<{
    day: string;
    dimension: string;
    name: string | null;
    events: string;
  }>(sql`
    select day::text, dimension, name, sum(bit_count(events))::text as events from event_day_bits
    where project_id = ${projectId} and dimension not like 'first:%' and dimension not like 'deviant:%'
    group by 1, 2, 3 order by 1, 2, name collate "C" nulls last`);
  return result.rows;
}

describe("charts under filters on several columns, from the event strings", () => {
  it("answer as the exact path does, for every operator, breakdown and whole-day bucket", async () => {
    const { groups, parted } = await expectPathsAgree(oneBatch, SHAPES);
    expect(groups).toBeGreaterThan(100);
    // Three shapes of 14 days or more, each case's user and session series.
    expect(parted).toBe(3 * CASES.length * 2);
  });

  it("hold the same counts, and answer the same, when the events arrived shuffled in small batches", async () => {
    const counts = await stringCounts(oneBatch);
    // Each event once under its name and once under each column's value (or "not set").
    const total = counts
      .filter((row) => row.dimension === "name")
      .reduce((sum, row) => sum + Number(row.events), 0);
    expect(total).toBe(traffic(oneBatch).length);
    expect(await stringCounts(trickled)).toEqual(counts);
    expect(await storedMembers(oneBatch)).toEqual(await membersOfTraffic(oneBatch));
    expect(await storedMembers(trickled)).toEqual(await membersOfTraffic(trickled));
    await expectPathsAgree(trickled, SHAPES.slice(0, 2));
  });

  it("add the events waiting for the next refresh from the events", async () => {
    const projectId = uniqueId("bits-pending");
    const events = shuffled(traffic(projectId), 9);
    const folded = events.slice(0, Math.floor(events.length / 2));
    await insertEvents(database.db, folded);
    await foldIn(projectId);
    const lock = await rawConnection();
    try {
      // Held on another connection, the refresh lock keeps other tests' refreshes from folding them in.
      await lock.query("select pg_advisory_lock(hashtext('refresh_derived'))");
      await insertEvents(database.db, events.slice(folded.length), { refresh: false });
      // The long shape also counts them in parts: each new event in the part of its bucket.
      const long = SHAPES.find(([label]) => label.startsWith("two weeks by day")) as Shape;
      const { parted } = await expectPathsAgree(projectId, [...SHAPES.slice(0, 2), long]);
      expect(parted).toBe(CASES.length * 2);
    } finally {
      await lock.query("select pg_advisory_unlock(hashtext('refresh_derived'))");
      await lock.end();
    }
  });

  it("count a member once per day and browser whose columns change within the day, before and after a refresh", async () => {
    const projectId = uniqueId("bits-deviants");
    const at = (minute: number) => new Date(FROM + DAY + minute * 60_000);
    const view = (
      minute: number,
      sessionId: string,
      profileId: string,
      browser: string,
      country: string,
    ) => ({
      projectId,
      name: "screen_view",
      sessionId,
      profileId,
      deviceId: profileId,
      createdAt: at(minute),
      os: "Linux",
      browser,
      country,
    });
    // Session a's first view is Chrome in NO, then Firefox in NO and Chrome in SE; b (the same
    // visitor) starts in SE on Firefox, then NO; c (another) stays on Safari in NO.
    await insertEvents(database.db, [
      view(0, "a", "p1", "Chrome", "NO"),
      view(1, "a", "p1", "Firefox", "NO"),
      view(2, "a", "p1", "Chrome", "SE"),
    ]);
    await foldIn(projectId);
    await insertEvents(database.db, [
      view(3, "b", "p1", "Firefox", "SE"),
      view(4, "b", "p1", "Firefox", "NO"),
      view(5, "c", "p2", "Safari", "NO"),
      view(6, "c", "p2", "Safari", "NO"),
    ]);
    await foldIn(projectId);
    const shape: Shape = ["the day", FROM + DAY, FROM + 2 * DAY, DAY, false, true];
    const counts = async (country: string, segment: ChartSegment) => {
      const item: Case = {
        event: "screen_view",
        breakdown: "browser",
        filters: [
          ["os", ["Linux"]],
          ["country", [country]],
        ],
      };
      const query = chartQuery(projectId, item, shape, true, segment);
      const source = await eventBitsSource(database.db, query);
      expect(source && eventFirstsCover(query, source.timeZone)).toBe(true);
      const result = await chartSeries(database.db, query);
      expect(result).toEqual(
        await chartSeries(database.db, chartQuery(projectId, item, shape, false, segment)),
      );
      return Object.fromEntries(result.groups.map((group) => [group.breakdowns[0], group.current[0]]));
    };
    expect(await counts("NO", "session")).toEqual({ Chrome: "1", Firefox: "2", Safari: "1" });
    expect(await counts("SE", "session")).toEqual({ Chrome: "1", Firefox: "1" });
    expect(await counts("NO", "user")).toEqual({ Chrome: "1", Firefox: "1", Safari: "1" });
    const lock = await rawConnection();
    try {
      await lock.query("select pg_advisory_lock(hashtext('refresh_derived'))");
      // Waiting: a's and b's sessions already count under Chrome and Firefox in NO (a by its first
      // view, b by a view that is not), c's does not under Chrome.
      await insertEvents(
        database.db,
        [
          view(7, "a", "p1", "Chrome", "NO"),
          view(8, "b", "p1", "Firefox", "NO"),
          view(9, "c", "p2", "Chrome", "NO"),
        ],
        { refresh: false },
      );
      expect(await counts("NO", "session")).toEqual({ Chrome: "2", Firefox: "2", Safari: "1" });
      expect(await counts("NO", "user")).toEqual({ Chrome: "2", Firefox: "1", Safari: "1" });
    } finally {
      await lock.query("select pg_advisory_unlock(hashtext('refresh_derived'))");
      await lock.end();
    }
    await foldIn(projectId);
    expect(await counts("NO", "session")).toEqual({ Chrome: "2", Firefox: "2", Safari: "1" });
    expect(await representativeMisfits(projectId)).toEqual({ entries: "0", strings: "0", stored: "0" });
  });

  it("answer in the project's zone, not while it changes, and in the new one once built again", async () => {
    const projectId = await createProject(database.db, await createOrganization(database.db), {
      timezone: "Asia/Kolkata",
    });
    await insertEvents(database.db, traffic(projectId));
    const offset = 5.5 * HOUR;
    const kolkata: Shape[] = [["Kolkata: the week by day", FROM - offset, TO - offset, DAY, true, true]];
    // UTC's midnights are not Kolkata's days: the exact path answers those.
    const utc: Shape = ["UTC: the week by day", FROM, TO, DAY, false, false];
    await expectPathsAgree(projectId, [...kolkata, utc]);

    await database.db.execute(sql`update projects set timezone = 'UTC' where id = ${projectId}`);
    const query = chartQuery(projectId, CASES[0] as Case, utc, true);
    expect(eventBitsCover(query)).toBe(true);
    expect(await eventBitsSource(database.db, query)).toBeUndefined();
    for (let attempt = 0; attempt < 100; attempt++) {
      await foldIn(projectId);
      const built = await database.db.execute<{ timezone: string }>(
        sql`select timezone from event_bit_timezones where project_id = ${projectId}`,
      );
      if (built.rows[0]?.timezone === "UTC") break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const [, ...utcEdges] = utc;
    const [, ...kolkataEdges] = kolkata[0] as Shape;
    await expectPathsAgree(projectId, [
      ["UTC, built again: the week by day", ...utcEdges.slice(0, 4), true] as Shape,
      ["Kolkata's days, no longer the project's", ...kolkataEdges.slice(0, 4), false] as Shape,
    ]);
    expect(await stringCounts(projectId)).toEqual(await stringCountsOfTraffic(projectId));
    expect(await storedMembers(projectId)).toEqual(await membersOfTraffic(projectId));
  });

  it("leave a property path to the exact path over a day past a bound, or where an event holds an object there", async () => {
    const { rows } = await database.db.execute<{ values: number }>(
      sql`select property_day_value_limit() as values`,
    );
    const limit = Number(rows[0]?.values);
    const projectId = uniqueId("bits-property-bounds");
    const order = (n: number, day: number): EventInput => ({
      projectId,
      sessionId: `s-${day}-${n}`,
      createdAt: new Date(FROM + day * DAY + (n + 1) * 60_000),
      name: "purchase",
      country: n % 2 === 0 ? "NO" : "SE",
      properties: { order_id: `o-${day}-${n}`, plan: n % 3 === 0 ? "pro" : "free", cart: { items: n } },
    });
    // Day 0 holds as many order ids as the bound allows, day 1 a few.
    await insertEvents(database.db, [
      ...Array.from({ length: limit }, (_, n) => order(n, 0)),
      ...Array.from({ length: 3 }, (_, n) => order(n, 1)),
    ]);
    const twoDays: Shape = ["two days by day", FROM, FROM + 2 * DAY, DAY, false, true];
    const series = (filters: FilterSpec[], rollups = true) =>
      chartQuery(projectId, { event: "purchase", breakdown: "country", filters }, twoDays, rollups);
    const expectExact = async (filters: FilterSpec[], fromStrings: boolean) => {
      expect({
        filters,
        fromStrings: (await eventBitsSource(database.db, series(filters))) !== undefined,
      }).toEqual({
        filters,
        fromStrings,
      });
      const exact = await chartSeries(database.db, series(filters, false));
      expect(exact.groups.length).toBeGreaterThan(0);
      expect(await chartSeries(database.db, series(filters))).toEqual(exact);
    };
    const orders: FilterSpec[] = [["properties.order_id", ["o-0-1", "o-1-2"]]];
    await expectExact(orders, true);
    await expectExact([["properties.plan", ["pro"]]], true);
    // `cart` is an object: `contains` may match its JSON text, which no string holds; `is` over a
    // plain value cannot, and `cart.items` holds numbers.
    await expectExact([["properties.cart", ["items"], "contains"]], false);
    await expectExact([["properties.cart.items", [2], "gte"]], true);
    const orderStrings = async () => {
      const strings = await database.db.execute<{ days: number; strings: number; events: number }>(sql`
        select count(distinct day)::int as days, count(*)::int as strings, sum(bit_count(events))::int as events
        from event_day_bits where project_id = ${projectId} and dimension = 'property:["order_id"]'`);
      return strings.rows[0];
    };
    // One order id more on day 0 takes the path past the bound there. That run still writes its
    // strings of the day, every value (a request that found them there just before it committed
    // reads them whole); the next run that meets the path in that day deletes them, and day 1
    // keeps its own.
    await insertEvents(database.db, [order(limit, 0)]);
    const paths = await database.db.execute<{ day: string; values: number | null }>(sql`
      select day::text, cardinality(names) as values from event_property_day_paths
      where project_id = ${projectId} and path = '{order_id}' order by day`);
    expect(paths.rows.map((row) => row.values)).toEqual([null, 3]);
    expect(await orderStrings()).toEqual({ days: 2, strings: limit + 4, events: limit + 4 });
    await expectExact(orders, false);
    await insertEvents(database.db, [order(limit + 1, 0)]);
    expect(await orderStrings()).toEqual({ days: 1, strings: 3, events: 3 });
    await expectExact(orders, false);
    await expectExact([["properties.plan", ["pro"]]], true);
  });

  it('leave other segments, regex and "" filters, several breakdowns and other columns to other paths', () => {
    const shape = SHAPES[1] as Shape;
    const base = chartQuery(oneBatch, CASES[0] as Case, shape, true);
    expect(eventBitsCover(base)).toBe(true);
    expect(eventBitsCover({ ...base, rollups: false })).toBe(false);
    for (const segment of SEGMENTS) {
      expect({ segment, covered: eventBitsCover({ ...base, segment }) }).toEqual({ segment, covered: true });
    }
    for (const segment of ["user_average", "one_event_per_user", "property_sum"] as const) {
      expect({ segment, covered: eventBitsCover({ ...base, segment }) }).toEqual({ segment, covered: false });
    }
    const filter = (name: string, operator: Filter["operator"], values: string[]): Filter => ({
      field: chartField(name),
      operator,
      values,
      index: 0,
    });
    for (const filters of [
      [],
      [...base.filters, filter("browser", "regex", ["^Chr"])],
      [...base.filters, filter("browser", "is", ["Chrome", ""])],
      [...base.filters, filter("city", "is", ["Oslo"])],
      [...base.filters, filter("path", "is", ["/pricing"])],
      // A property's strings hold its values: not a negative operator's events (those without it).
      [...base.filters, filter("properties.plan", "isNot", ["pro"])],
      [...base.filters, filter("properties.plan", "isNull", [])],
    ]) {
      expect({ filters, covered: eventBitsCover({ ...base, filters }) }).toEqual({ filters, covered: false });
    }
    expect(eventBitsCover({ ...base, breakdowns: [chartField("browser"), chartField("os")] })).toBe(false);
    expect(eventBitsCover({ ...base, breakdowns: [chartField("path")] })).toBe(false);
  });
});

/** The counts a project's strings must hold, from its events in its zone now. */
async function stringCountsOfTraffic(projectId: string) {
  const result = await database.db.execute<{
    day: string;
    dimension: string;
    name: string | null;
    events: string;
  }>(sql`
    select date_trunc('day', e.created_at, coalesce(p.timezone, 'UTC'))::text as day, d.dimension,
      nullif(d.value, '') as name, count(*)::text as events
    from events e join projects p on p.id = e.project_id
    cross join lateral (values ('name', e.name), ('country', e.country), ('device', e.device),
      ('browser', e.browser), ('os', e.os), ('referrer_name', e.referrer_name), ('referrer_type', e.referrer_type),
      ('utm_source', e.utm_source), ('utm_medium', e.utm_medium), ('utm_campaign', e.utm_campaign),
      -- The test traffic's property values (the nested object has no value of its own).
      ('property:["plan"]', e.properties ->> 'plan'), ('property:["price"]', e.properties ->> 'price'),
      ('property:["nested","variant"]', e.properties #>> '{nested,variant}')) as d(dimension, value)
    where e.project_id = ${projectId} and (d.dimension not like 'property:%' or d.value is not null)
    group by 1, 2, 3 order by 1, 2, nullif(d.value, '') collate "C" nulls last`);
  return result.rows;
}

type DayMembers = {
  segment: string;
  day: string;
  entries: string;
  members: string;
};

/**
 * Per segment and day of a project's members: how many entries its pages hold, and a digest of its
 * hashes as a multiset; every page but the day's last is full, and the day's entries are as many as
 * its numbered events.
 */
async function storedMembers(projectId: string): Promise<DayMembers[]> {
  const pages = await database.db.execute<{ misfits: string }>(sql`
    select count(*)::text as misfits from (
      select m.page, cardinality(m.members) as n, max(m.page) over (partition by m.segment, m.day) as last_page, s.size
      from event_day_members m
      join event_day_sizes s on s.project_id = m.project_id and s.day = m.day
      where m.project_id = ${projectId}
    ) as p
    where (page < last_page and n <> member_page_events()) or (page = last_page and page * member_page_events() + n <> size)`);
  expect(pages.rows[0]?.misfits).toBe("0");
  expect(await representativeMisfits(projectId)).toEqual({ entries: "0", strings: "0", stored: "0" });
  const result = await database.db.execute<DayMembers>(sql`
    select segment, day::text, count(*)::text as entries, md5(string_agg(member::text, ',' order by member)) as members
    from event_day_members m, unnest(m.members) as member
    where m.project_id = ${projectId} group by 1, 2 order by 1, 2`);
  return result.rows;
}

/**
 * What is wrong with the representatives kept beside the members (event_day_first_pages):
 * `entries`, those whose representative is not an entry of the same day and member at or below
 * it that is its own representative (or whose arrays differ in length); `strings`, the numbers
 * whose bit in the day's `first:` string of the segment is not set exactly where an entry is its
 * own representative; `stored`, representatives event_day_firsts does not hold at the same number.
 */
async function representativeMisfits(projectId: string) {
  const result = await database.db.execute<{ entries: string; strings: string; stored: string }>(sql`
    with entries as (
      select m.segment, m.day, m.page * member_page_events() + e.i - 1 as number, e.member, e.first,
        cardinality(m.members) = cardinality(f.firsts) as aligned
      from event_day_members m
      join event_day_first_pages f on f.project_id = m.project_id and f.segment = m.segment and f.day = m.day
        and f.page = m.page
      cross join lateral unnest(m.members, f.firsts) with ordinality as e(member, first, i)
      where m.project_id = ${projectId}
    ),
    bits as (
      select b.day, substring(b.dimension from 7) as segment, b.block * day_block_bits() + p.i - 1 as number
      from event_day_bits b, generate_series(1, length(b.events)) as p(i)
      where b.project_id = ${projectId} and b.dimension like 'first:%' and get_bit(b.events, p.i - 1) = 1
    )
    select
      (select count(*) from entries a left join entries r on r.segment = a.segment and r.day = a.day
        and r.number = a.first
        where not a.aligned or r.number is null or r.member <> a.member or r.first <> r.number
          or a.first > a.number)::text as entries,
      (select count(*) from (select segment, day, number from entries where first = number) as own
        full join bits using (segment, day, number)
        where own.number is null or bits.number is null)::text as strings,
      (select count(*) from entries a left join event_day_firsts f on f.project_id = ${projectId}
        and f.segment = a.segment and f.day = a.day and f.member = a.member and f.number = a.number
        where a.first = a.number and f.number is null)::text as stored`);
  return result.rows[0];
}

/** The same from the project's events in its zone now, hashed as the refresh is documented to hash them. */
async function membersOfTraffic(projectId: string): Promise<DayMembers[]> {
  const result = await database.db.execute<DayMembers>(sql`
    select s.segment, date_trunc('day', e.created_at, coalesce(p.timezone, 'UTC'))::text as day,
      count(*)::text as entries, md5(string_agg(h.member::text, ',' order by h.member)) as members
    from events e left join projects p on p.id = e.project_id
    cross join (values ('session'), ('user')) as s(segment)
    cross join lateral (select hashtextextended(case s.segment when 'user' then e.profile_id else e.session_id end, 0)
      as member) as h
    where e.project_id = ${projectId} group by 1, 2 order by 1, 2`);
  return result.rows;
}
