import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projects, visitorDimensionSketches } from "../../src/db/schema";
import { estimateVisitors } from "../../src/queries/insights/visitor-sketch";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { testDatabase } from "../support/node/database";
import { generateTraffic, shuffled } from "../support/traffic";

/**
 * The visitor sketches per day and dimension value (src/db/routines/refresh_dimension_sketches.sql)
 * are maintained by union as sessions arrive and rebuilt where a session changes: whatever the
 * order and the batches the events arrive in, they must end up as the sketches of one batch.
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
  return generateTraffic({ projectId, seed: 61, sessions: 300, from: FROM, to: TO }) as EventInput[];
}

/** A project's sketch rows without the project id, in a stable order. */
async function sketchRows(projectId: string) {
  const s = visitorDimensionSketches;
  return database.db
    .select({
      day: s.day,
      dimension: s.dimension,
      name: s.name,
      plane: s.plane,
      registers: s.registers,
      entries: s.entries,
    })
    .from(s)
    .where(eq(s.projectId, projectId))
    .orderBy(asc(s.day), asc(s.dimension), sql`${s.name} collate "C" nulls last`, asc(s.plane));
}

const keyOf = (day: Date, dimension: string, name: string | null) =>
  `${day.toISOString()}|${dimension}|${name ?? "(not set)"}`;

/**
 * Distinct visitors per (day, dimension, value), counted here from the sessions of a UTC project,
 * and per path and event name from their events (dimensions 'path' and 'name': the sessions with
 * an event on that path or of that name).
 */
async function exactCounts(projectId: string) {
  const result = await database.db.execute<{
    day: string;
    dimension: string;
    name: string | null;
    visitors: string;
  }>(sql`
    select (extract(epoch from date_trunc('day', s.started_at, 'UTC')) * 1000)::bigint::text as day,
      d.dimension, nullif(d.value, '') as name, count(distinct s.profile_id)::text as visitors
    from sessions s
    cross join lateral (select dimension, to_jsonb(s) ->> dimension from session_dimensions()) as d(dimension, value)
    where s.project_id = ${projectId}
    group by 1, 2, 3
    union all
    select (extract(epoch from date_trunc('day', s.started_at, 'UTC')) * 1000)::bigint::text,
      'path', e.path, count(distinct s.profile_id)::text
    from sessions s
    join events e on e.project_id = s.project_id and e.session_id = s.id and e.path <> ''
    where s.project_id = ${projectId}
    group by 1, 2, 3
    union all
    select (extract(epoch from date_trunc('day', s.started_at, 'UTC')) * 1000)::bigint::text,
      'name', e.name, count(distinct s.profile_id)::text
    from sessions s
    join events e on e.project_id = s.project_id and e.session_id = s.id and e.name <> ''
    where s.project_id = ${projectId}
    group by 1, 2, 3`);
  return new Map(
    result.rows.map((row) => [
      keyOf(new Date(Number(row.day)), row.dimension, row.name),
      Number(row.visitors),
    ]),
  );
}

/**
 * Visitors per (day, dimension, value) estimated from a project's sketches: a dense group's planes
 * count their set bits; a sparse group's entries (register << 6 | value) give each register's
 * largest value, and plane k counts the registers at or above k.
 */
async function estimatedCounts(projectId: string) {
  const planes = new Map<string, Map<number, number>>();
  for (const row of await sketchRows(projectId)) {
    const key = keyOf(row.day, row.dimension, row.name);
    const sketch = planes.get(key) ?? new Map<number, number>();
    if (row.plane > 0) {
      sketch.set(row.plane, [...(row.registers ?? "")].filter((bit) => bit === "1").length);
    } else {
      const largest = new Map<number, number>();
      for (const entry of row.entries ?? []) {
        largest.set(entry >> 6, Math.max(largest.get(entry >> 6) ?? 0, entry & 63));
      }
      for (const value of largest.values()) {
        for (let plane = 1; plane <= value; plane++) sketch.set(plane, (sketch.get(plane) ?? 0) + 1);
      }
    }
    planes.set(key, sketch);
  }
  return new Map([...planes].map(([key, sketch]) => [key, estimateVisitors(sketch)]));
}

describe("visitor sketches per day and dimension value", () => {
  it("hold every value's visitors of every day: the estimates are the exact counts at this size", async () => {
    const id = await project();
    await insertEvents(database.db, traffic(id));
    const exact = await exactCounts(id);
    expect(exact.size).toBeGreaterThan(100);
    expect(await estimatedCounts(id)).toEqual(exact);
  });

  it("end up the same whether the events arrive in one batch or shuffled in small ones", async () => {
    const batch = await project();
    const trickle = await project();
    await insertEvents(database.db, traffic(batch));
    const events = shuffled(traffic(trickle), 11);
    for (let i = 0; i < events.length; i += 120) await insertEvents(database.db, events.slice(i, i + 120));
    const rows = await sketchRows(batch);
    expect(rows.length).toBeGreaterThan(200);
    expect(await sketchRows(trickle)).toEqual(rows);
  });

  it("forget a session's old value and day when a late earlier event changes them", async () => {
    const late = await project();
    const once = await project();
    const at = (hours: number) => new Date(FROM + hours * HOUR);
    const first = (projectId: string) => [
      {
        projectId,
        sessionId: "s1",
        profileId: "alice",
        createdAt: at(24.2),
        country: "SE",
        device: "mobile",
      },
      { projectId, sessionId: "s2", profileId: "bob", createdAt: at(24.5), country: "SE", device: "desktop" },
    ];
    // Earlier than s1's start, on the day before, from another country and visitor.
    const earlier = (projectId: string) => [
      {
        projectId,
        sessionId: "s1",
        profileId: "carol",
        createdAt: at(23.9),
        country: "NO",
        device: "tablet",
      },
    ];
    await insertEvents(database.db, first(late));
    await insertEvents(database.db, earlier(late));
    await insertEvents(database.db, [...first(once), ...earlier(once)]);
    expect(await sketchRows(late)).toEqual(await sketchRows(once));
    // Alice's session became Carol's, from Norway, on the day before: Sweden keeps Bob alone.
    const counts = await estimatedCounts(late);
    const day = (hours: number) => new Date(Math.floor((FROM + hours * HOUR) / (24 * HOUR)) * 24 * HOUR);
    expect(counts.get(keyOf(day(24.5), "country", "SE"))).toBe(1);
    expect(counts.get(keyOf(day(23.9), "country", "NO"))).toBe(1);
    expect(counts.get(keyOf(day(24.5), "device", "mobile"))).toBeUndefined();
  });

  it("write a group dense once it outgrows the sparse form, in one batch or as it grows", async () => {
    const once = await project();
    const grown = await project();
    // 3,000 sessions of 3,000 visitors on one day, all from Norway: one group far past the sparse
    // limit of 128 entries. `grown` gets them in three batches: sparse, then made dense, then
    // merged into the dense planes.
    const insert = (projectId: string, from: number, to: number) =>
      database.db.execute(sql`
        insert into events (project_id, name, device_id, profile_id, session_id, created_at, country)
        select ${projectId}, 'screen_view', 'v-' || i, 'v-' || i, 's-' || i,
          ${new Date(FROM).toISOString()}::timestamptz + (i % 1440) * interval '1 minute', 'NO'
        from generate_series(${from}::int, ${to}::int) as i`);
    await insert(once, 1, 3_000);
    await database.db.execute(sql`select refresh_derived()`);
    for (const [from, to] of [
      [1, 1_000],
      [1_001, 2_000],
      [2_001, 3_000],
    ] as const) {
      await insert(grown, from, to);
      await database.db.execute(sql`select refresh_derived()`);
    }
    const rows = await sketchRows(once);
    const norway = rows.filter((row) => row.dimension === "country" && row.name === "NO");
    expect(norway.map((row) => row.plane)).toEqual(norway.map((_, index) => index + 1));
    expect(norway.every((row) => row.registers !== null && row.entries === null)).toBe(true);
    expect(await sketchRows(grown)).toEqual(rows);
    const estimate = (await estimatedCounts(once)).get(keyOf(new Date(FROM), "country", "NO")) ?? 0;
    expect(Math.abs(estimate - 3_000)).toBeLessThanOrEqual(60);
  });

  it("keep a session started in a midnight hour that happens twice in the day it belongs to", async () => {
    // Havana falls back from 01:00 to 00:00 on 2025-11-02: local midnight is 04:00 and 05:00 UTC,
    // and a start at 04:30 UTC belongs to November 2, which begins at 05:00. A late earlier event
    // rebuilds November 1 only (its session's referrer changes) or November 2 only.
    const at = (utc: string) => new Date(`2025-11-${utc}Z`);
    const early = (projectId: string): EventInput => ({
      projectId,
      sessionId: "early",
      profileId: "ana",
      createdAt: at("02T04:30"),
    });
    const cases: Array<[string, (projectId: string) => EventInput[], (projectId: string) => EventInput[]]> = [
      [
        "November 1 rebuilt",
        (projectId) => [
          early(projectId),
          {
            projectId,
            sessionId: "before",
            profileId: "ben",
            createdAt: at("01T20:00"),
            referrer: "https://a.example",
          },
        ],
        (projectId) => [
          {
            projectId,
            sessionId: "before",
            profileId: "ben",
            createdAt: at("01T19:00"),
            referrer: "https://b.example",
          },
        ],
      ],
      [
        "November 2 rebuilt",
        (projectId) => [
          early(projectId),
          {
            projectId,
            sessionId: "after",
            profileId: "eva",
            createdAt: at("02T06:00"),
            referrer: "https://a.example",
          },
        ],
        (projectId) => [
          {
            projectId,
            sessionId: "after",
            profileId: "eva",
            createdAt: at("02T05:30"),
            referrer: "https://b.example",
          },
        ],
      ],
    ];
    for (const [label, first, late] of cases) {
      const trickled = await project("America/Havana");
      const once = await project("America/Havana");
      await insertEvents(database.db, first(trickled));
      await insertEvents(database.db, late(trickled));
      await insertEvents(database.db, [...first(once), ...late(once)]);
      const rows = await sketchRows(once);
      expect(rows.some((row) => row.day.toISOString() === "2025-11-02T05:00:00.000Z")).toBe(true);
      expect({ label, rows: await sketchRows(trickled) }).toEqual({ label, rows });
    }
  });

  it("follow the project's timezone when it changes", async () => {
    const moved = await project();
    const tokyo = await project("Asia/Tokyo");
    await insertEvents(database.db, traffic(moved));
    await insertEvents(database.db, traffic(tokyo));
    await database.db.update(projects).set({ timezone: "Asia/Tokyo" }).where(eq(projects.id, moved));
    await database.db.execute(sql`select refresh_derived()`);
    const rows = await sketchRows(tokyo);
    expect(rows.some((row) => row.day.getUTCHours() === 15)).toBe(true);
    expect(await sketchRows(moved)).toEqual(rows);
  });
});
