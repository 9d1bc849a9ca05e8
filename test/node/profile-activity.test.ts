import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeUserDays, derivedState, profileDays, projects, retentionWeeks } from "../../src/db/schema";
import { DAY_MS, localDayNumber } from "../../src/lib/timezone";
import { createOrganization, createProject, type EventInput, insertEvents } from "../support/factories";
import { testDatabase } from "../support/node/database";
import type { RawEvent } from "../support/reference";
import { generateTraffic, shuffled } from "../support/traffic";

/**
 * The profile activity tables (src/db/routines/refresh_profile_activity.sql) change by difference
 * run by run: whatever batches the events arrive in (a profile's earlier day after its later ones,
 * which changes the later day's gap and the profile's cohort), they must hold what is computed here
 * from all events, in the project's timezone.
 */

const database = testDatabase();
afterAll(() => database.close());

const FROM = Date.UTC(2026, 8, 1);
const TO = FROM + 45 * DAY_MS;
const ZONE = "America/New_York";
let organizationId: string;

beforeAll(async () => {
  organizationId = await createOrganization(database.db);
});

const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
/** The Monday of a day number's week (day 0, 1970-01-01, was a Thursday). */
const mondayOf = (day: number) => day - ((day + 3) % 7);
const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Every aggregate row, as sorted `key → users` lines, computed from the raw events. */
function expected(events: RawEvent[], timezone: string) {
  const days = new Map<string, Map<number, { events: number; identified: number }>>();
  for (const event of events) {
    const day = localDayNumber(event.createdAt.getTime(), timezone);
    const ofProfile = days.get(event.profileId) ?? new Map();
    const cell = ofProfile.get(day) ?? { events: 0, identified: 0 };
    cell.events += 1;
    if (event.profileId !== event.deviceId) cell.identified += 1;
    ofProfile.set(day, cell);
    days.set(event.profileId, ofProfile);
  }
  const userDays = new Map<string, number>();
  const weeks = new Map<string, number>();
  const profileRows: string[] = [];
  const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const [profileId, ofProfile] of days) {
    const all = [...ofProfile.keys()].sort((a, b) => a - b);
    for (const [day, cell] of ofProfile)
      profileRows.push(`${profileId} ${isoDay(day)} ${cell.events} ${cell.identified}`);
    for (const identified of [false, true]) {
      const active = all.filter((day) => !identified || (ofProfile.get(day)?.identified ?? 0) > 0);
      active.forEach((day, i) => {
        const gap = i === 0 ? 91 : Math.min(91, day - (active[i - 1] as number));
        add(userDays, `${isoDay(day)} ${identified} ${gap} ${i === active.length - 1}`);
      });
    }
    const activeWeeks = [
      ...new Set(all.filter((day) => (ofProfile.get(day)?.identified ?? 0) > 0).map(mondayOf)),
    ].sort((a, b) => a - b);
    activeWeeks.forEach((week, i) => {
      const next = activeWeeks[i + 1];
      add(
        weeks,
        `${isoDay(activeWeeks[0] as number)} ${isoDay(week)} ${next === undefined ? "-" : isoDay(next)}`,
      );
    });
  }
  const lines = (map: Map<string, number>) => [...map].map(([key, users]) => `${key} ${users}`).sort(byKey);
  return { profileDays: profileRows.sort(byKey), userDays: lines(userDays), weeks: lines(weeks) };
}

async function stored(projectId: string) {
  const days = await database.db.select().from(profileDays).where(eq(profileDays.projectId, projectId));
  const userDays = await database.db
    .select()
    .from(activeUserDays)
    .where(eq(activeUserDays.projectId, projectId))
    .orderBy(asc(activeUserDays.day));
  const weeks = await database.db
    .select()
    .from(retentionWeeks)
    .where(eq(retentionWeeks.projectId, projectId));
  return {
    profileDays: days
      .map((row) => `${row.profileId} ${row.day} ${row.events} ${row.identifiedEvents}`)
      .sort(byKey),
    userDays: userDays
      .map((row) => `${row.day} ${row.identified} ${row.gap} ${row.last} ${row.users}`)
      .sort(byKey),
    weeks: weeks.map((row) => `${row.cohort} ${row.week} ${row.nextWeek ?? "-"} ${row.users}`).sort(byKey),
  };
}

const traffic = (seed: number, projectId: string) =>
  generateTraffic({ projectId, seed, sessions: 220, from: FROM, to: TO });

describe("the profile activity tables", () => {
  it("hold every profile's days, gaps and weeks whether the events arrive at once or in shuffled batches", async () => {
    const oneBatch = await createProject(database.db, organizationId, { timezone: ZONE });
    const batched = await createProject(database.db, organizationId, { timezone: ZONE });
    const events = traffic(41, oneBatch);
    await insertEvents(database.db, events as EventInput[]);
    const reference = expected(events, ZONE);
    // The traffic exercises what the aggregates encode: repeat days, long gaps, several weeks.
    expect(reference.userDays.some((line) => / true \d+ false /.test(line))).toBe(true);
    expect(reference.userDays.some((line) => / 91 /.test(line))).toBe(true);
    expect(reference.weeks.some((line) => !line.includes(" - "))).toBe(true);
    expect(await stored(oneBatch)).toEqual(reference);

    const moved = shuffled(
      events.map((event) => ({ ...event, projectId: batched })),
      5,
    );
    for (let i = 0; i < moved.length; i += 97) {
      await insertEvents(database.db, moved.slice(i, i + 97) as EventInput[]);
    }
    expect(await stored(batched)).toEqual(reference);
  });

  it("count a day as identified when its first identified event comes in a later run than its others", async () => {
    const projectId = await createProject(database.db, organizationId, { timezone: ZONE });
    const [first] = traffic(47, projectId);
    const anonymous = { ...(first as RawEvent), profileId: "visitor-a", deviceId: "visitor-a" };
    const at = (day: number, hour: number) => new Date(FROM + day * DAY_MS + hour * 3_600_000);
    // Days 10 and 20, anonymous: the profile and both days are stored, neither identified.
    const runs: RawEvent[][] = [
      [
        { ...anonymous, createdAt: at(10, 15) },
        { ...anonymous, createdAt: at(20, 15) },
      ],
      // An identified event on day 20, a day already stored: it adds an identified day and a cohort.
      [{ ...anonymous, deviceId: "device-b", createdAt: at(20, 16) }],
      // Then one on day 10: the identified day 20 gets a gap, and the cohort moves to day 10's week.
      [{ ...anonymous, deviceId: "device-b", createdAt: at(10, 16) }],
      // And one more on identified day 20: nothing changes but the counts of profile_days.
      [{ ...anonymous, deviceId: "device-c", createdAt: at(20, 17) }],
    ];
    const seen: RawEvent[] = [];
    for (const run of runs) {
      await insertEvents(database.db, run as EventInput[]);
      seen.push(...run);
      expect(await stored(projectId)).toEqual(expected(seen, ZONE));
    }
    expect((await stored(projectId)).userDays).toContain(
      `${isoDay(localDayNumber(at(20, 16).getTime(), ZONE))} true 10 true 1`,
    );
  });

  it("rebuild a project's rows in its new timezone, and rebuild all the same after a reset", async () => {
    const projectId = await createProject(database.db, organizationId, { timezone: "Asia/Tokyo" });
    const events = traffic(43, projectId);
    await insertEvents(database.db, events as EventInput[]);
    expect(await stored(projectId)).toEqual(expected(events, "Asia/Tokyo"));

    await database.db.update(projects).set({ timezone: ZONE }).where(eq(projects.id, projectId));
    await database.db.execute(sql`select refresh_derived()`);
    expect(await stored(projectId)).toEqual(expected(events, ZONE));

    await database.db.update(derivedState).set({ processedXid: 0 }).where(eq(derivedState.name, "activity"));
    await database.db.execute(sql`select refresh_derived()`);
    expect(await stored(projectId)).toEqual(expected(events, ZONE));
  });
});
