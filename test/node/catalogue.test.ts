import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { createScratchDatabase } from "../../scripts/db/scratch-database";
import type { Database } from "../../src/db/client";
import { eventKeyCatalogue, eventNameCatalogue, eventValueCatalogue } from "../../src/db/schema";
import { EVENT_COLUMNS } from "../../src/lib/dimensions";
import { FIELD_KEYS } from "../support/event-fields";
import {
  connect,
  createOrganization,
  createProject,
  type EventInput,
  insertEvents,
} from "../support/factories";
import { flattenProperties } from "../support/listing-reference";
import { testDatabase } from "../support/node/database";
import type { RawEvent } from "../support/reference";
import { generateTraffic, shuffled } from "../support/traffic";
import { drizzleStatements, refreshUntilFolded } from "../support/watermarks";

/**
 * The discovery catalogue (src/db/routines/refresh_catalogue.sql) is kept by addition: whatever the
 * batches the events arrive in, it must hold exactly the names, keys and values counted here.
 */

const database = testDatabase();
afterAll(() => database.close());

const FROM = Date.UTC(2026, 8, 1);
const TO = FROM + 3 * 86_400_000;
let organizationId: string;

beforeAll(async () => {
  organizationId = await createOrganization(database.db);
});

function expected(events: RawEvent[]) {
  const names = new Map<string, { events: number; first: number; last: number }>();
  const keys = new Map<string, number>();
  const values = new Map<string, number>();
  for (const event of events) {
    const at = event.createdAt.getTime();
    const name = names.get(event.name) ?? { events: 0, first: at, last: at };
    names.set(event.name, {
      events: name.events + 1,
      first: Math.min(name.first, at),
      last: Math.max(name.last, at),
    });
    const set: Array<[string, string]> = [
      ...EVENT_COLUMNS.map((column): [string, string] => {
        const field = FIELD_KEYS[column];
        const raw = field === undefined ? null : event[field];
        return [column, raw === null || raw === undefined ? "" : String(raw)];
      }),
      ...Object.entries(flattenProperties(event.properties)).map(([key, value]): [string, string] => [
        `properties.${key}`,
        value,
      ]),
    ];
    for (const [key, value] of set) {
      if (value === "") continue;
      const keyId = JSON.stringify([event.name, key]);
      keys.set(keyId, (keys.get(keyId) ?? 0) + 1);
      const valueId = JSON.stringify([event.name, key, value]);
      values.set(valueId, (values.get(valueId) ?? 0) + 1);
    }
  }
  return { names, keys, values };
}

async function stored(projectId: string, db: Database = database.db) {
  const [names, keys, values] = await Promise.all([
    db.select().from(eventNameCatalogue).where(eq(eventNameCatalogue.projectId, projectId)),
    db
      .select()
      .from(eventKeyCatalogue)
      .where(eq(eventKeyCatalogue.projectId, projectId))
      .orderBy(asc(eventKeyCatalogue.key)),
    db.select().from(eventValueCatalogue).where(eq(eventValueCatalogue.projectId, projectId)),
  ]);
  return {
    names: new Map(
      names.map((row) => [
        row.name,
        { events: row.events, first: row.firstSeen.getTime(), last: row.lastSeen.getTime() },
      ]),
    ),
    keys: new Map(keys.map((row) => [JSON.stringify([row.name, row.key]), row.events])),
    values: new Map(values.map((row) => [JSON.stringify([row.name, row.key, row.value]), row.events])),
    tracked: keys.map((row) => [row.trackedValues, row.valuesLeftOut] as const),
  };
}

describe("the discovery catalogue", () => {
  it("holds the counts of the raw events whether they arrive at once or in shuffled batches", async () => {
    const events = generateTraffic({ projectId: "x", seed: 91, sessions: 120, from: FROM, to: TO });
    const nested = {
      ...(events[0] as RawEvent),
      name: "nested",
      properties: { a: { b: [1, { c: "d" }] }, e: false },
    };
    const all = [...events, nested];
    const oneBatch = await createProject(database.db, organizationId);
    const batched = await createProject(database.db, organizationId);
    await insertEvents(database.db, all.map((event) => ({ ...event, projectId: oneBatch })) as EventInput[]);
    const shuffledEvents = shuffled(all, 5).map((event) => ({ ...event, projectId: batched }));
    for (let i = 0; i < shuffledEvents.length; i += 97) {
      await insertEvents(database.db, shuffledEvents.slice(i, i + 97) as EventInput[]);
    }
    await refreshUntilFolded(drizzleStatements(database.db), ["catalogue"], [oneBatch, batched]);
    const reference = expected(all);
    for (const projectId of [oneBatch, batched]) {
      const catalogue = await stored(projectId);
      expect(catalogue.names).toEqual(reference.names);
      expect(catalogue.keys).toEqual(reference.keys);
      expect(catalogue.values).toEqual(reference.values);
      // Every value of this small history is tracked.
      for (const [, leftOut] of catalogue.tracked) expect(leftOut).toBe(false);
    }
    expect(reference.values.get(JSON.stringify(["nested", "properties.a.b.1.c", "d"]))).toBe(1);
    expect(reference.values.get(JSON.stringify(["nested", "properties.e", "false"]))).toBe(1);
  });

  it("holds the same counts when its first run finds a history already stored", async () => {
    // The first run (its watermark at 0: a bulk load, a new database) reads the events in place
    // instead of copying the new ones; the shared test database never takes that path with events.
    const scratch = await createScratchDatabase("api_catalogue_first_run");
    const handle = connect(scratch.url, inject("relayProxy"));
    try {
      await migrateDatabase(scratch.url);
      const organization = await createOrganization(handle.db);
      const history = generateTraffic({ projectId: "x", seed: 92, sessions: 90, from: FROM, to: TO });
      const later = generateTraffic({
        projectId: "x",
        seed: 93,
        sessions: 30,
        from: TO,
        to: TO + 86_400_000,
      });
      const projects = [
        await createProject(handle.db, organization),
        await createProject(handle.db, organization),
      ];
      for (const [index, projectId] of projects.entries()) {
        const rows = history.slice(index * 7).map((event) => ({ ...event, projectId }));
        await insertEvents(handle.db, rows as EventInput[], { refresh: false });
      }
      const watermark = () =>
        handle.db.execute<{ processed: string | null }>(
          sql`select (select processed_xid::text from derived_state where name = 'catalogue') as processed`,
        );
      expect((await watermark()).rows[0]?.processed ?? "0").toBe("0");

      await refreshUntilFolded(drizzleStatements(handle.db), ["catalogue"]);
      expect(Number((await watermark()).rows[0]?.processed)).toBeGreaterThan(0);
      for (const [index, projectId] of projects.entries()) {
        const reference = expected(history.slice(index * 7));
        const catalogue = await stored(projectId, handle.db);
        expect(catalogue.names).toEqual(reference.names);
        expect(catalogue.keys).toEqual(reference.keys);
        expect(catalogue.values).toEqual(reference.values);
      }

      // Later runs add to what the first one counted.
      const [first] = projects as [string, string];
      await insertEvents(handle.db, later.map((event) => ({ ...event, projectId: first })) as EventInput[]);
      await refreshUntilFolded(drizzleStatements(handle.db), ["catalogue"]);
      const reference = expected([...history, ...later]);
      const catalogue = await stored(first, handle.db);
      expect(catalogue.names).toEqual(reference.names);
      expect(catalogue.values).toEqual(reference.values);
    } finally {
      await handle.close();
      await scratch.drop();
    }
  });
});

describe("values tracked per key", () => {
  it("keeps the first ones up to the limit, the most frequent first, and their exact counts after the key is full", async () => {
    // The limit is 10,000 in refresh_derived(); called here with 3 on a database of its own, since
    // a run folds every project's new events under one watermark.
    const scratch = await createScratchDatabase("api_catalogue_tracked");
    const handle = connect(scratch.url, inject("relayProxy"));
    try {
      await migrateDatabase(scratch.url);
      const projectId = await createProject(handle.db, await createOrganization(handle.db));
      let second = 0;
      const batch = (values: Array<[string, string]>): EventInput[] =>
        values.map(([key, value]) => ({
          projectId,
          sessionId: "s1",
          profileId: "p1",
          name: "pick",
          createdAt: new Date(FROM + ++second * 1_000),
          properties: { [key]: value },
        }));
      const times = (key: string, value: string, count: number): Array<[string, string]> =>
        Array.from({ length: count }, (): [string, string] => [key, value]);
      const run = async (events: EventInput[]) => {
        await insertEvents(handle.db, events, { refresh: false });
        await handle.db.execute(
          sql`select refresh_catalogue((pg_snapshot_xmin(pg_current_snapshot())::text)::bigint, 3)`,
        );
      };
      const tracked = async () => {
        const rows = await handle.db
          .select()
          .from(eventKeyCatalogue)
          .where(eq(eventKeyCatalogue.projectId, projectId))
          .orderBy(asc(eventKeyCatalogue.key));
        const values = await handle.db
          .select()
          .from(eventValueCatalogue)
          .where(eq(eventValueCatalogue.projectId, projectId));
        return Object.fromEntries(
          rows
            .filter((row) => row.key.startsWith("properties."))
            .map((row) => [
              row.key,
              {
                events: row.events,
                leftOut: row.valuesLeftOut,
                values: Object.fromEntries(
                  values.filter((value) => value.key === row.key).map((value) => [value.value, value.events]),
                ),
              },
            ]),
        );
      };

      // `k` has more values than the limit, `m` exactly as many.
      await run(
        batch([
          ...times("k", "a", 4),
          ...times("k", "b", 3),
          ...times("k", "c", 2),
          ...times("k", "d", 1),
          ...times("m", "x", 1),
          ...times("m", "y", 1),
          ...times("m", "z", 1),
        ]),
      );
      expect(await tracked()).toEqual({
        "properties.k": { events: 10, leftOut: true, values: { a: 4, b: 3, c: 2 } },
        "properties.m": { events: 3, leftOut: false, values: { x: 1, y: 1, z: 1 } },
      });
      // A new value of a full key that says so is left out; one of a full key that does not says so now.
      await run(
        batch([...times("k", "e", 5), ...times("k", "a", 2), ...times("m", "w", 1), ...times("m", "x", 1)]),
      );
      expect(await tracked()).toEqual({
        "properties.k": { events: 17, leftOut: true, values: { a: 6, b: 3, c: 2 } },
        "properties.m": { events: 5, leftOut: true, values: { x: 2, y: 1, z: 1 } },
      });
      await run(batch([...times("k", "b", 1), ...times("k", "d", 1), ...times("m", "z", 2)]));
      expect(await tracked()).toEqual({
        "properties.k": { events: 19, leftOut: true, values: { a: 6, b: 4, c: 2 } },
        "properties.m": { events: 7, leftOut: true, values: { x: 2, y: 1, z: 3 } },
      });
    } finally {
      await handle.close();
      await scratch.drop();
    }
  });
});
