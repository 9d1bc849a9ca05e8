import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { derivedState, sessions } from "../../src/db/schema";
import worker from "../../src/index";
import { insertEvents, uniqueId } from "../support/factories";
import { testDatabase } from "../support/worker/http";

const database = testDatabase();
afterAll(() => database.close());

describe("cron trigger", () => {
  it("folds events written since the last run into sessions", async () => {
    const projectId = uniqueId("cron");
    const start = Date.UTC(2026, 5, 1, 9, 0, 0);
    await insertEvents(
      database.db,
      [
        { projectId, sessionId: "s", createdAt: new Date(start), path: "/a" },
        { projectId, sessionId: "s", createdAt: new Date(start + 90_000), path: "/b" },
      ],
      { refresh: false },
    );
    // Other test files refresh concurrently, so the run itself is proven by its watermark row.
    const calledAt = new Date();

    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: start }), env, ctx);
    await waitOnExecutionContext(ctx);

    const [state] = await database.db.select().from(derivedState).where(eq(derivedState.name, "sessions"));
    expect(state?.lastRunAt?.getTime()).toBeGreaterThanOrEqual(calledAt.getTime() - 1_000);
    const after = await database.db.select().from(sessions).where(eq(sessions.projectId, projectId));
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({
      id: "s",
      durationMs: 90_000,
      screenViewCount: 2,
      entryPath: "/a",
      exitPath: "/b",
    });
  });
});
