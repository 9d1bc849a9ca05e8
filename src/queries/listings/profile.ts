import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events, profileSummaries, profiles } from "../../db/schema";
import type { ProfileRow } from "../../schemas/listings";
import { isoText } from "../sql-helpers";
import { NO_GROUPS, profileRecordColumns } from "./profile-record";

/** The profile's event at one end of its history, through the (project, profile, time) index. */
function edgeEvent(projectId: string, profileId: string, end: "first" | "last") {
  const order =
    end === "first" ? [asc(events.createdAt), asc(events.id)] : [desc(events.createdAt), desc(events.id)];
  return sql`(select ${events.createdAt} from ${events}
    where ${and(eq(events.projectId, projectId), eq(events.profileId, profileId))}
    order by ${sql.join(order, sql`, `)} limit 1)`;
}

/**
 * The profile row of `/profiles/{profileId}` (contract A3), or null when no stored event has that
 * profile_id. First and last seen come from its events themselves (two index probes), so they are
 * exact and current even before the next refresh; whether it identified comes from its summary,
 * or, for a profile the refresh has not reached yet, from its few events.
 */
export async function findProfile(
  db: Database,
  projectId: string,
  profileId: string,
): Promise<ProfileRow | null> {
  const first = edgeEvent(projectId, profileId, "first");
  const last = edgeEvent(projectId, profileId, "last");
  const identified = sql<boolean>`coalesce(
    (select ${profileSummaries.identified} from ${profileSummaries}
      where ${and(eq(profileSummaries.projectId, projectId), eq(profileSummaries.profileId, profileId))}),
    exists (select 1 from ${events} where ${and(eq(events.projectId, projectId), eq(events.profileId, profileId))}
      and ${events.deviceId} <> ${events.profileId}))`;
  const rows = await db
    .select({
      ...profileRecordColumns,
      is_external: identified,
      created_at: sql<string | null>`${isoText(first)}`,
      last_seen_at: sql<string | null>`${isoText(last)}`,
    })
    .from(sql`(select 1) as one`)
    .leftJoin(profiles, and(eq(profiles.projectId, projectId), eq(profiles.id, profileId)));
  const row = rows[0];
  if (!row || row.created_at === null || row.last_seen_at === null) return null;
  return {
    id: profileId,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    avatar: row.avatar,
    properties: row.properties,
    project_id: projectId,
    is_external: row.is_external,
    created_at: row.created_at,
    last_seen_at: row.last_seen_at,
    ...NO_GROUPS,
  };
}

/** Whether some stored event carries the profile id (one index probe). */
export async function profileExists(db: Database, projectId: string, profileId: string): Promise<boolean> {
  const rows = await db
    .select({ found: sql<number>`1` })
    .from(events)
    .where(and(eq(events.projectId, projectId), eq(events.profileId, profileId)))
    .limit(1);
  return rows.length > 0;
}
