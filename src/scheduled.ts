import { openDatabase } from "./db/client";
import type { Bindings } from "./env";
import { refreshFamiliesUnlessRunning } from "./queries/derived";

/**
 * Cron trigger: fold newly written events into the derived tables, the session and the event
 * family at once on two connections and the session strings after the event family, each unless a
 * run of it is already under way (a busy project's run can outlast the minute); the next trigger
 * then folds them.
 */
export async function runScheduled(
  _controller: ScheduledController,
  env: Bindings,
  ctx: ExecutionContext,
): Promise<void> {
  const database = openDatabase(env);
  try {
    const { sessionsRecomputed, eventsFolded, sessionsInStrings } = await refreshFamiliesUnlessRunning(
      database.db,
    );
    console.log(
      sessionsRecomputed === undefined
        ? "refresh_derived: sessions skipped, another run is under way"
        : `refresh_derived: ${sessionsRecomputed} sessions recomputed`,
    );
    console.log(
      eventsFolded
        ? "refresh_derived: events folded"
        : "refresh_derived: events skipped, another run is under way",
    );
    console.log(
      sessionsInStrings === undefined
        ? "refresh_derived: strings skipped, another run is under way"
        : `refresh_derived: ${sessionsInStrings} sessions taken into the strings`,
    );
  } finally {
    ctx.waitUntil(database.close());
  }
}
