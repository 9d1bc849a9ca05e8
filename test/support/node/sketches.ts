import { asc, eq } from "drizzle-orm";
import type { Database } from "../../../src/db/client";
import { visitorDaySketches, visitorSketches } from "../../../src/db/schema";

/**
 * A project's hour and day visitor sketches without its id, in a stable order: what a test
 * compares between two ways of deriving the same traffic.
 */
export async function storedSketches(db: Database, projectId: string) {
  const hours = await db
    .select({
      hour: visitorSketches.hour,
      plane: visitorSketches.plane,
      registers: visitorSketches.registers,
    })
    .from(visitorSketches)
    .where(eq(visitorSketches.projectId, projectId))
    .orderBy(asc(visitorSketches.hour), asc(visitorSketches.plane));
  const days = await db
    .select({
      day: visitorDaySketches.day,
      plane: visitorDaySketches.plane,
      registers: visitorDaySketches.registers,
    })
    .from(visitorDaySketches)
    .where(eq(visitorDaySketches.projectId, projectId))
    .orderBy(asc(visitorDaySketches.day), asc(visitorDaySketches.plane));
  return { hours, days };
}
