import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { derivedState, profileSummaries } from "../../src/db/schema";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { rawConnection, testDatabase } from "../support/node/database";
import { buildSessions, type RawEvent } from "../support/reference";
import { generateTraffic, shuffled } from "../support/traffic";
import { drizzleStatements, refreshUntilFolded } from "../support/watermarks";

/**
 * The profile summaries (src/db/routines/refresh_profile_summaries.sql) are merged run by run:
 * whatever the batches the events arrive in (a session's later event before its first, which hands
 * the session from one visitor to another), they must hold what is computed here from all events.
 */

const database = testDatabase();
afterAll(() => database.close());

const FROM = Date.UTC(2026, 9, 1);
const TO = FROM + 4 * 86_400_000;
let organizationId: string;

beforeAll(async () => {
  organizationId = await createOrganization(database.db);
});

type IdentifiedEvent = RawEvent & { id: string };

function expected(events: IdentifiedEvent[], projectId: string) {
  const sessionsOf = new Map<string, number>();
  for (const session of buildSessions(events, projectId)) {
    sessionsOf.set(session.visitor, (sessionsOf.get(session.visitor) ?? 0) + 1);
  }
  const byProfile = new Map<string, IdentifiedEvent[]>();
  for (const event of events)
    byProfile.set(event.profileId, [...(byProfile.get(event.profileId) ?? []), event]);
  return new Map(
    [...byProfile.entries()].map(([profileId, list]) => {
      const latest = [...list].sort(
        (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      )[0] as IdentifiedEvent;
      const times = list.map((event) => event.createdAt.getTime());
      return [
        profileId,
        {
          firstSeen: Math.min(...times),
          lastSeen: Math.max(...times),
          lastEventId: latest.id,
          identified: list.some((event) => event.profileId !== event.deviceId),
          lastIdentified: Math.max(
            ...list
              .filter((event) => event.profileId !== event.deviceId)
              .map((event) => event.createdAt.getTime()),
            Number.NEGATIVE_INFINITY,
          ),
          country: latest.country,
          city: latest.city,
          device: latest.device,
          browser: latest.browser,
          events: list.length,
          sessions: sessionsOf.get(profileId) ?? 0,
        },
      ];
    }),
  );
}

async function stored(projectId: string) {
  const rows = await database.db
    .select()
    .from(profileSummaries)
    .where(eq(profileSummaries.projectId, projectId));
  return new Map(
    rows.map((row) => [
      row.profileId,
      {
        firstSeen: row.firstSeenAt.getTime(),
        lastSeen: row.lastSeenAt.getTime(),
        lastEventId: row.lastEventId,
        identified: row.identified,
        lastIdentified: row.lastIdentifiedAt?.getTime() ?? Number.NEGATIVE_INFINITY,
        country: row.country,
        city: row.city,
        device: row.device,
        browser: row.browser,
        events: row.eventCount,
        sessions: row.sessionCount,
      },
    ]),
  );
}

describe("the profile summaries", () => {
  it("hold every profile's figures whether the events arrive at once or in shuffled batches", async () => {
    const events = generateTraffic({ projectId: "x", seed: 17, sessions: 160, from: FROM, to: TO }).map(
      (event) => ({ ...event, id: crypto.randomUUID() }),
    );
    // Two events of one profile at the same millisecond: the id decides which is the latest.
    const tied = events[0] as IdentifiedEvent;
    const at = new Date(TO + 3_600_000);
    events.push(
      { ...tied, id: "00000000-0000-4000-8000-0000000000f1", sessionId: "tie", createdAt: at, country: "DK" },
      { ...tied, id: "00000000-0000-4000-8000-0000000000f2", sessionId: "tie", createdAt: at, country: "FI" },
    );
    const oneBatch = await createProject(database.db, organizationId);
    const batched = await createProject(database.db, organizationId);
    await insertEvents(
      database.db,
      events.map((event) => ({ ...event, projectId: oneBatch })) as EventInput[],
    );
    // The same events again under new ids (the tied pair's in the same order), shuffled into batches.
    const again = events.map((event) => ({
      ...event,
      id: event.id.startsWith("00000000-") ? event.id.replace("00000000-", "00000001-") : crypto.randomUUID(),
    }));
    const shuffledEvents = shuffled(again, 11).map((event) => ({ ...event, projectId: batched }));
    for (let i = 0; i < shuffledEvents.length; i += 61) {
      await insertEvents(database.db, shuffledEvents.slice(i, i + 61) as EventInput[]);
    }
    const reference = expected(events, "x");
    expect([...reference.values()].some((profile) => profile.sessions === 0)).toBe(true);
    expect(reference.get(tied.profileId)?.country).toBe("FI");
    expect(await stored(oneBatch)).toEqual(reference);
    expect(await stored(batched)).toEqual(expected(again, "x"));
  });

  it("count a session written before its visitor's events reached them, and one that only grew once", async () => {
    const projectId = await createProject(database.db, organizationId);
    const event = (sessionId: string, profileId: string, minute: number): IdentifiedEvent => ({
      ...(generateTraffic({ projectId, seed: 31, sessions: 1, from: FROM, to: FROM + 1 })[0] as RawEvent),
      id: crypto.randomUUID(),
      projectId,
      sessionId,
      profileId,
      deviceId: profileId,
      createdAt: new Date(FROM + minute * 60_000),
    });
    const known = [event("s-1", "known", 0)];
    await insertEvents(database.db, known as EventInput[]);
    // A transaction left open holds every run's watermark below the events inserted after it
    // began: the sessions take them in (they read every committed event), the summaries do not yet.
    const holder = await rawConnection();
    const held = [event("s-2", "known", 60), event("s-3", "newcomer", 61)];
    try {
      await holder.query("begin");
      await holder.query("select txid_current()");
      await insertEvents(database.db, held as EventInput[], { refresh: false });
      await database.db.execute(sql`select refresh_derived()`);
      // The case this test is about happened: the newcomer's session is stored, its summary is not.
      const sessionsNow = await database.db.execute<{ id: string }>(
        sql`select id from sessions where project_id = ${projectId} order by id`,
      );
      expect(sessionsNow.rows.map((row) => row.id)).toEqual(["s-1", "s-2", "s-3"]);
      expect([...(await stored(projectId)).keys()]).toEqual(["known"]);
      expect((await stored(projectId)).get("known")?.sessions).toBe(2);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
    // Then the summaries take the held events in: the newcomer's session is counted.
    await refreshUntilFolded(drizzleStatements(database.db), [], [projectId]);
    // And a session that only grew (an event later in s-3) changes no count.
    const grown = [event("s-3", "newcomer", 70)];
    await insertEvents(database.db, grown as EventInput[]);
    expect(await stored(projectId)).toEqual(expected([...known, ...held, ...grown], projectId));
    expect((await stored(projectId)).get("newcomer")?.sessions).toBe(1);
  });

  it("a run after its watermark was reset rebuilds them the same", async () => {
    const projectId = await createProject(database.db, organizationId);
    const events = generateTraffic({ projectId, seed: 29, sessions: 40, from: FROM, to: TO }).map(
      (event) => ({
        ...event,
        id: crypto.randomUUID(),
      }),
    );
    await insertEvents(database.db, events as EventInput[]);
    await database.db.update(derivedState).set({ processedXid: 0 }).where(eq(derivedState.name, "profiles"));
    await database.db.execute(sql`select refresh_derived()`);
    expect(await stored(projectId)).toEqual(expected(events, projectId));
  });
});
