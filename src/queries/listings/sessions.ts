import { desc, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events, sessions } from "../../db/schema";
import type { SessionRow } from "../../schemas/listings";
import type { SessionScope } from "../insights/model";
import { sessionsInScope } from "../insights/session-scope";
import { isoText } from "../sql-helpers";
import type { ListingPosition } from "./events";

/**
 * One page of `/sessions`: the scope's sessions (first event in the window, filters as section 3
 * says), `limit` rows after `after`, by start then id, both descending (ids in byte order, the same
 * on Postgres and PGlite). Each row is OpenPanel's session row; its latitude and longitude are
 * its first event's, read for the page's rows only.
 */
export async function listSessions(
  db: Database,
  scope: SessionScope,
  page: { limit: number; after?: ListingPosition },
): Promise<Array<SessionRow & { position: ListingPosition }>> {
  const s = sessions;
  const firstEvent = sql`(select ${events.latitude} as latitude, ${events.longitude} as longitude from ${events}
    where ${events.projectId} = ${s.projectId} and ${events.sessionId} = ${s.id}
    order by ${events.createdAt}, ${events.id} limit 1)`;
  const rows = await db
    .select({
      id: s.id,
      profile_id: s.profileId,
      device_id: s.deviceId,
      project_id: s.projectId,
      duration: s.durationMs,
      created_at: isoText(s.startedAt),
      created_ms: sql<number>`floor(extract(epoch from ${s.startedAt}) * 1000)::float8`,
      ended_at: isoText(s.endedAt),
      event_count: s.eventCount,
      screen_view_count: s.screenViewCount,
      is_bounce: s.isBounce,
      entry_path: s.entryPath,
      entry_origin: s.entryOrigin,
      exit_path: s.exitPath,
      exit_origin: s.exitOrigin,
      referrer: s.referrer,
      referrer_name: s.referrerName,
      referrer_type: s.referrerType,
      utm_source: s.utmSource,
      utm_medium: s.utmMedium,
      utm_campaign: s.utmCampaign,
      utm_term: s.utmTerm,
      utm_content: s.utmContent,
      country: s.country,
      region: s.region,
      city: s.city,
      latitude: sql<number | null>`(select latitude from ${firstEvent} as first_event)`,
      longitude: sql<number | null>`(select longitude from ${firstEvent} as first_event)`,
      device: s.device,
      brand: s.brand,
      model: s.model,
      browser: s.browser,
      browser_version: s.browserVersion,
      os: s.os,
      os_version: s.osVersion,
      revenue: s.revenue,
    })
    .from(s)
    .where(
      sql`${sessionsInScope(scope)}${
        page.after
          ? sql` and (${s.startedAt}, ${s.id} collate "C") < (${new Date(page.after.createdAt).toISOString()}::timestamptz, ${page.after.id}::text collate "C")`
          : sql``
      }`,
    )
    .orderBy(desc(s.startedAt), sql`${s.id} collate "C" desc`)
    .limit(page.limit);
  return rows.map(({ created_ms, ...row }) => ({
    ...row,
    duration: Number(row.duration),
    revenue: Number(row.revenue),
    latitude: row.latitude === null ? null : Number(row.latitude),
    longitude: row.longitude === null ? null : Number(row.longitude),
    groups: [],
    position: { createdAt: Number(created_ms), id: row.id },
  }));
}
