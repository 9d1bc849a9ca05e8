import { asc, eq } from "drizzle-orm";
import type { Database } from "../../../src/db/client";
import { visitorDaySketches, visitorSketches } from "../../../src/db/schema";
import { estimateVisitors } from "../../../src/queries/insights/visitor-sketch";

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

/**
 * Visitors per day estimated from a project's day sketches (each plane k counts the registers at
 * or above k), keyed by the day's instant: at a few visitors a day the estimate is the exact count.
 */
export async function estimatedDayVisitors(db: Database, projectId: string): Promise<Map<string, number>> {
  const planes = new Map<string, Map<number, number>>();
  for (const row of (await storedSketches(db, projectId)).days) {
    const key = row.day.toISOString();
    const sketch = planes.get(key) ?? new Map<number, number>();
    sketch.set(row.plane, [...row.registers].filter((bit) => bit === "1").length);
    planes.set(key, sketch);
  }
  return new Map([...planes].map(([day, sketch]) => [day, estimateVisitors(sketch)]));
}
