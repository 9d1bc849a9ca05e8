import { openDatabase } from "./db/client";
import type { Bindings } from "./env";
import { refreshDerived } from "./queries/derived";

/** Cron trigger: fold newly written events into the derived tables (sessions). */
export async function runScheduled(
  _controller: ScheduledController,
  env: Bindings,
  ctx: ExecutionContext,
): Promise<void> {
  const database = openDatabase(env);
  try {
    const touched = await refreshDerived(database.db);
    console.log(`refresh_derived: ${touched} sessions recomputed`);
  } finally {
    ctx.waitUntil(database.close());
  }
}
