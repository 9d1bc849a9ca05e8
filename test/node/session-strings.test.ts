import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import type { SessionScope } from "../../src/queries/insights/model";
import { bitStringsCover } from "../../src/queries/insights/session-masks";
import { is } from "../support/dimension-filter-cases";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import {
  dayNumberProblems,
  expectedBitStrings,
  expectedPageStrings,
  expectedVisitorSets,
  storedBitStrings,
  storedDayNumbers,
  storedPageStrings,
  storedVisitorSets,
} from "../support/node/session-bits";
import { generateTraffic, shuffled } from "../support/traffic";

/**
 * The session strings are folded in a transaction of their own (src/db/routines/refresh_session_strings.sql),
 * from the sessions the session family has committed, as the cron trigger runs them on its second
 * connection: whichever runs of the family they follow, and however many they skip, they must end up
 * holding what the project's sessions give.
 */

const database = testDatabase();
afterAll(() => database.close());

const HOUR = 3_600_000;
const FROM = Date.UTC(2026, 8, 7);
const TO = FROM + 3 * 24 * HOUR;
let organizationId: string;

beforeAll(async () => {
  organizationId = await createOrganization(database.db);
});

/**
 * Runs one routine until its watermark (derived_state `name`) is past every event of the project:
 * another test's open transaction can hold a run's watermark back for a moment.
 */
async function runUntilPast(routine: string, name: string, projectId: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    await database.db.execute(sql.raw(`select ${routine}(true)`));
    const result = await database.db.execute<{ past: boolean }>(sql`
      select coalesce((select processed_xid from derived_state where name = ${name}), 0)
        > coalesce((select max(ingest_xid) from events where project_id = ${projectId}), -1) as past`);
    if (result.rows[0]?.past === true) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${routine} never caught up with the events of ${projectId}`);
}

const sessionFamily = (projectId: string) => runUntilPast("refresh_session_family", "sessions", projectId);
const sessionStrings = (projectId: string) =>
  runUntilPast("refresh_session_strings", "session_bits", projectId);

/** The strings of the project hold what its sessions give, in `timezone`. */
async function expectStringsExact(projectId: string, timezone = "UTC"): Promise<void> {
  expect(await dayNumberProblems(database.db, projectId, timezone)).toEqual([]);
  const bits = await expectedBitStrings(database.db, projectId, timezone);
  expect(bits.values.size).toBeGreaterThan(0);
  expect(await storedBitStrings(database.db, projectId)).toEqual(bits);
  expect(await storedVisitorSets(database.db, projectId)).toEqual(
    await expectedVisitorSets(database.db, projectId, timezone),
  );
  expect(await storedPageStrings(database.db, projectId)).toEqual(
    await expectedPageStrings(database.db, projectId, timezone),
  );
}

/** Whether the strings' record says they were built in `timezone` for the project. */
async function stringsZone(projectId: string): Promise<string | undefined> {
  const result = await database.db.execute<{ timezone: string }>(
    sql`select timezone from session_bit_timezones where project_id = ${projectId}`,
  );
  return result.rows[0]?.timezone;
}

describe("session strings folded apart from the session family", () => {
  it("take in what the family committed, a run later or several runs at once, and end up exact", async () => {
    const id = await createProject(database.db, organizationId, {});
    const all = shuffled(generateTraffic({ projectId: id, seed: 71, sessions: 240, from: FROM, to: TO }), 71);
    const batches = [0, 1, 2, 3, 4].map((k) => all.filter((_, index) => index % 5 === k) as EventInput[]);
    for (const [index, batch] of batches.entries()) {
      await insertEvents(database.db, batch, { refresh: false });
      await sessionFamily(id);
      // The strings run after every other run of the family, as a busy second connection would.
      if (index % 2 === 1) await sessionStrings(id);
    }
    // The family has folded the last batch; the strings have not taken it in yet.
    const folded = await database.db.execute<{ sessions: number }>(
      sql`select count(*)::int as sessions from sessions where project_id = ${id}`,
    );
    const numbered = (await storedDayNumbers(database.db, id)).ordinalOf.size;
    expect(numbered).toBeLessThan(folded.rows[0]?.sessions ?? 0);
    await sessionStrings(id);
    expect((await storedDayNumbers(database.db, id)).ordinalOf.size).toBe(folded.rows[0]?.sessions);
    await expectStringsExact(id);
  });

  it("count the visitor again whom a late earlier event took a session from, across separate runs", async () => {
    const id = await createProject(database.db, organizationId, {});
    const at = (hours: number) => new Date(FROM + hours * HOUR);
    const event = (sessionId: string, profileId: string, hours: number, country: string): EventInput => ({
      projectId: id,
      sessionId,
      profileId,
      createdAt: at(hours),
      country,
      path: `/p${Math.round(hours * 10)}`,
    });
    await insertEvents(
      database.db,
      [event("s1", "alice", 24.2, "SE"), event("s1", "alice", 24.3, "SE"), event("s2", "bob", 24.5, "SE")],
      { refresh: false },
    );
    await sessionFamily(id);
    await sessionStrings(id);
    const before = await storedVisitorSets(database.db, id);
    // Carol's earlier event makes s1 hers (and Norway's, a day back); Alice has no session left.
    await insertEvents(database.db, [event("s1", "carol", 23.9, "NO")], { refresh: false });
    await sessionFamily(id);
    await insertEvents(database.db, [event("s2", "bob", 24.6, "SE")], { refresh: false });
    await sessionFamily(id);
    await sessionStrings(id);
    const after = await storedVisitorSets(database.db, id);
    expect(after).not.toEqual(before);
    await expectStringsExact(id);
    const visitor = await database.db.execute<{ profile_id: string }>(sql`
      select v.profile_id from session_day_ordinals o
      join visitor_ordinals v on v.project_id = o.project_id and v.ordinal = o.visitor
      where o.project_id = ${id} and o.session_id = 's1'`);
    expect(visitor.rows).toEqual([{ profile_id: "carol" }]);
  });

  it("keep their own record of the zone, so a zone change the family took first still rebuilds them", async () => {
    const id = await createProject(database.db, organizationId, {});
    await insertEvents(
      database.db,
      generateTraffic({ projectId: id, seed: 73, sessions: 120, from: FROM, to: TO }) as EventInput[],
    );
    expect(await stringsZone(id)).toBe("UTC");
    await database.db.update(projects).set({ timezone: "Asia/Tokyo" }).where(eq(projects.id, id));
    // The family rebuilds its days in the new zone and records it; the strings are still the old zone's.
    await database.db.execute(sql`select refresh_session_family(true)`);
    const rollupZone = await database.db.execute<{ timezone: string }>(
      sql`select timezone from rollup_timezones where project_id = ${id}`,
    );
    expect(rollupZone.rows).toEqual([{ timezone: "Asia/Tokyo" }]);
    expect(await stringsZone(id)).toBe("UTC");
    // Two whole Tokyo days: the strings of the UTC days answer nothing until they are rebuilt.
    const tokyoMidnight = FROM + 15 * HOUR;
    const scope: SessionScope = {
      projectId: id,
      window: { start: tokyoMidnight, end: tokyoMidnight + 48 * HOUR },
      filters: parse([is("device", "is", ["mobile"]), is("country", "isNot", ["SE"])]),
      rollups: true,
      projectTimezone: "Asia/Tokyo",
      regexMatchesEmpty: false,
    };
    expect(await bitStringsCover(database.db, scope, [])).toBe(false);
    await database.db.execute(sql`select refresh_session_strings(true)`);
    expect(await stringsZone(id)).toBe("Asia/Tokyo");
    expect(await bitStringsCover(database.db, scope, [])).toBe(true);
    await expectStringsExact(id, "Asia/Tokyo");
  });

  it("run beside a session family only in one snapshot (REPEATABLE READ); otherwise they wait for it", async () => {
    const outcome = await database.db.transaction(async (family) => {
      // A session family under way holds this lock to its commit.
      await family.execute(sql`select pg_advisory_xact_lock(hashtext('refresh_derived'))`);
      const committedReads = await database.db.execute<{ taken: number | null }>(
        sql`select refresh_session_strings(false) as taken`,
      );
      const oneSnapshot = database.db.transaction(
        async (strings) =>
          (
            await strings.execute<{ taken: number | null }>(
              sql`select refresh_session_strings(true) as taken`,
            )
          ).rows[0]?.taken,
        { isolationLevel: "repeatable read" },
      );
      let timer: ReturnType<typeof setTimeout> | undefined;
      const pause = new Promise((resolve) => {
        timer = setTimeout(() => resolve("still waiting"), 10_000);
      });
      try {
        return {
          committedReads: committedReads.rows[0]?.taken,
          oneSnapshot: await Promise.race([oneSnapshot, pause]),
        };
      } finally {
        clearTimeout(timer);
      }
    });
    // In READ COMMITTED a run would see the family's commits half: it returns at once, folding nothing.
    expect(outcome.committedReads).toBeNull();
    // In one snapshot it ran beside the family: a count of sessions, not a wait.
    expect(typeof outcome.oneSnapshot).toBe("number");
  });
});
