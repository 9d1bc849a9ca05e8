import { openDatabase } from "./db/client";
import type { Bindings } from "./env";
import { refreshDerivedUnlessRunning } from "./queries/derived";

/**
 * Cron trigger: fold newly written events into the derived tables, unless a run is already under
 * way (a busy project's run can outlast the minute); the next trigger then folds them.
 */
export async function runScheduled(
  _controller: ScheduledController,
  env: Bindings,
  ctx: ExecutionContext,
): Promise<void> {
  const database = openDatabase(env);
  try {
    const touched = await refreshDerivedUnlessRunning(database.db);
    console.log(
      touched === undefined
        ? "refresh_derived: skipped, another run is under way"
        : `refresh_derived: ${touched} sessions recomputed`,
    );
  } finally {
    ctx.waitUntil(database.close());
  }
}
