import { and, eq, like, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { eventKeyCatalogue } from "../../db/schema";
import { PROPERTY_PREFIX } from "../../lib/filter-parser";

/**
 * Every (property key, event name) pair some stored event sets, keys flattened, by key then name
 * (byte order), only those of `eventName` when given: from the catalogue.
 */
export async function eventProperties(
  db: Database,
  projectId: string,
  eventName: string | undefined,
): Promise<Array<{ property_key: string; event_name: string }>> {
  const k = eventKeyCatalogue;
  const key = sql<string>`substr(${k.key}, ${PROPERTY_PREFIX.length + 1})`;
  return db
    .select({ property_key: key, event_name: k.name })
    .from(k)
    .where(
      and(
        eq(k.projectId, projectId),
        like(k.key, `${PROPERTY_PREFIX}%`),
        eventName === undefined ? undefined : eq(k.name, eventName),
      ),
    )
    .orderBy(sql`${key} collate "C"`, sql`${k.name} collate "C"`);
}
