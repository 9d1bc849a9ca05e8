import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { afterAll, describe, expect, it, vi } from "vitest";
import { derivedState, sessions } from "../../src/db/schema";
import worker from "../../src/index";
import { createOrganization, createProject, insertEvents, uniqueId } from "../support/factories";
import { testDatabase } from "../support/worker/http";

const database = testDatabase();
afterAll(() => database.close());

/** Runs the Worker's cron trigger once, as the runtime would, and waits for it to finish. */
async function triggerCron(scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/**
 * A session of two screen views `gapMs` apart (/a, then /b), written without a refresh, and a
 * reader of the project's folded sessions with what they should then hold.
 */
async function unfoldedSession(projectId: string, start: number, gapMs: number) {
  await insertEvents(
    database.db,
    [
      { projectId, sessionId: "s", createdAt: new Date(start), path: "/a" },
      { projectId, sessionId: "s", createdAt: new Date(start + gapMs), path: "/b" },
    ],
    { refresh: false },
  );
  return {
    folded: () => database.db.select().from(sessions).where(eq(sessions.projectId, projectId)),
    expected: { id: "s", durationMs: gapMs, screenViewCount: 2, entryPath: "/a", exitPath: "/b" },
  };
}

describe("cron trigger", () => {
  it("folds events written since the last run into sessions", async () => {
    const projectId = uniqueId("cron");
    const start = Date.UTC(2026, 5, 1, 9, 0, 0);
    const session = await unfoldedSession(projectId, start, 90_000);
    // Any refresh would fold these events, so the trigger's own run is proven by its watermark row.
    const calledAt = new Date();

    await triggerCron(start);

    const [state] = await database.db.select().from(derivedState).where(eq(derivedState.name, "sessions"));
    expect(state?.lastRunAt?.getTime()).toBeGreaterThanOrEqual(calledAt.getTime() - 1_000);
    const after = await session.folded();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject(session.expected);
  });

  it("skips the sessions at once while another run holds their lock, and the next trigger folds what it skipped", async () => {
    const projectId = uniqueId("cron-busy");
    const start = Date.UTC(2026, 5, 2, 9, 0, 0);
    const session = await unfoldedSession(projectId, start, 30_000);
    const log = vi.spyOn(console, "log");
    try {
      // A run under way, as a long refresh holds it: the trigger must return without waiting for it
      // (waiting, it would wait for this transaction, which waits for it: given up after 10 s).
      const outcome = await database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext('refresh_derived'))`);
        return Promise.race([
          triggerCron(start).then(() => "returned"),
          new Promise((resolve) => setTimeout(() => resolve("still waiting"), 10_000)),
        ]);
      });
      expect(outcome).toBe("returned");
      expect(log).toHaveBeenCalledWith("refresh_derived: sessions skipped, another run is under way");
      expect(log).toHaveBeenCalledWith("refresh_derived: events folded");
      expect(await session.folded()).toHaveLength(0);

      log.mockClear();
      await triggerCron(start + 60_000);
      expect(log).toHaveBeenCalledWith(
        expect.stringMatching(/^refresh_derived: [1-9]\d* sessions recomputed$/),
      );
    } finally {
      log.mockRestore();
    }
    const after = await session.folded();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject(session.expected);
  });

  /**
   * Holds the advisory lock `lock` (one a family takes while it runs) in a transaction, fires the
   * trigger, and waits up to 10 s for `done` while the lock is held: whether it came true, and
   * whether the trigger was then still waiting. The trigger ends once the lock is let go.
   */
  async function whileHeld(lock: string, scheduledTime: number, done: () => Promise<boolean>) {
    const { seen, cron } = await database.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${lock}))`);
      const cron = triggerCron(scheduledTime).then(() => "returned");
      let came = await done();
      for (const deadline = Date.now() + 10_000; !came && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        came = await done();
      }
      const pause = new Promise((resolve) => setTimeout(() => resolve("waiting"), 200));
      return { seen: { came, trigger: await Promise.race([cron, pause]) }, cron };
    });
    expect(await cron).toBe("returned");
    return seen;
  }

  it("runs the two families at once: either is folded while the other waits", async () => {
    const start = Date.UTC(2026, 5, 3, 9, 0, 0);
    // The event family waits for the catalogue's lock, taken after the event rollups.
    const session = await unfoldedSession(uniqueId("cron-families"), start, 45_000);
    expect(
      await whileHeld("refresh_catalogue", start, async () => (await session.folded()).length > 0),
    ).toEqual({
      came: true,
      trigger: "waiting",
    });
    expect((await session.folded())[0]).toMatchObject(session.expected);

    // The session family waits for the profile summaries' lock, taken after the session rollups;
    // the event family's last step records a new run.
    const activityRun = async () =>
      (
        await database.db.select().from(derivedState).where(eq(derivedState.name, "activity"))
      )[0]?.lastRunAt?.getTime();
    const before = await activityRun();
    const eventsFolded = async () => (await activityRun()) !== before;
    const later = await unfoldedSession(uniqueId("cron-families"), start + 3_600_000, 20_000);
    expect(await whileHeld("refresh_profile_summaries", start + 60_000, eventsFolded)).toEqual({
      came: true,
      trigger: "waiting",
    });
    expect(await later.folded()).toHaveLength(1);
  });

  it("skips the events at once while another run holds their lock, and still folds the sessions", async () => {
    const start = Date.UTC(2026, 5, 4, 9, 0, 0);
    const session = await unfoldedSession(uniqueId("cron-events-busy"), start, 20_000);
    const log = vi.spyOn(console, "log");
    try {
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext('refresh_event_rollups'))`);
        await triggerCron(start);
      });
      expect(log).toHaveBeenCalledWith("refresh_derived: events skipped, another run is under way");
      expect(log).toHaveBeenCalledWith(
        expect.stringMatching(/^refresh_derived: [1-9]\d* sessions recomputed$/),
      );
    } finally {
      log.mockRestore();
    }
    expect((await session.folded())[0]).toMatchObject(session.expected);
  });

  it("takes the sessions into the strings on the event family's connection, a trigger later at most", async () => {
    // A project of the projects table: the strings are per project day, in the project's zone.
    const projectId = await createProject(database.db, await createOrganization(database.db), {});
    const start = Date.UTC(2026, 5, 5, 9, 0, 0);
    const session = await unfoldedSession(projectId, start, 15_000);
    const numbered = async () =>
      (
        await database.db.execute<{ day: Date | string; ordinal: number }>(
          sql`select day, ordinal from session_day_ordinals where project_id = ${projectId} and session_id = 's'`,
        )
      ).rows;
    const log = vi.spyOn(console, "log");
    try {
      // The strings take in what the session family had committed when they began: this trigger's
      // sessions, or, when its session family was still running, the next trigger's.
      await triggerCron(start);
      expect((await session.folded())[0]).toMatchObject(session.expected);
      if ((await numbered()).length === 0) await triggerCron(start + 60_000);
      expect(log).toHaveBeenCalledWith(
        expect.stringMatching(/^refresh_derived: \d+ sessions taken into the strings$/),
      );
    } finally {
      log.mockRestore();
    }
    const rows = await numbered();
    expect(rows).toHaveLength(1);
    expect(new Date(rows[0]?.day ?? 0).getTime()).toBe(Date.UTC(2026, 5, 5));
  });

  it("skips the strings at once while another run holds their lock, and still folds both families", async () => {
    const start = Date.UTC(2026, 5, 6, 9, 0, 0);
    const session = await unfoldedSession(uniqueId("cron-strings-busy"), start, 25_000);
    const log = vi.spyOn(console, "log");
    try {
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext('refresh_session_strings'))`);
        await triggerCron(start);
      });
      expect(log).toHaveBeenCalledWith("refresh_derived: strings skipped, another run is under way");
      expect(log).toHaveBeenCalledWith("refresh_derived: events folded");
      expect(log).toHaveBeenCalledWith(
        expect.stringMatching(/^refresh_derived: [1-9]\d* sessions recomputed$/),
      );
    } finally {
      log.mockRestore();
    }
    expect((await session.folded())[0]).toMatchObject(session.expected);
  });
});
