import { and, desc, eq, gte, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";
import type { EventRow } from "../../schemas/listings";
import { eventConditions } from "../filter-conditions";
import { isoText } from "../sql-helpers";

/** What `/events` lists: a project's events of a window that pass every filter, newest first. */
export interface EventListing {
  projectId: string;
  /** Half-open window, epoch ms. */
  start: number;
  end: number;
  /** Event names; empty means every name. */
  names: string[];
  /** Event-scoped filters: the route's own column and property parameters become `is` filters here. */
  filters: Filter[];
  /** Only this profile's events, read through its (project, profile, time) index. */
  profileId?: string;
}

/** A place in the listing order: the next page starts with the next older event. */
export interface ListingPosition {
  createdAt: number;
  id: string;
}

/**
 * One page of the listing, `limit` rows after `after`, by `created_at` desc then `id` desc: the
 * export's keyset order on its index (project_id, created_at, id), so every page costs the same.
 * Rows come out as OpenPanel's event rows, properties flattened by Postgres (flatten_properties).
 */
export async function listEvents(
  db: Database,
  listing: EventListing,
  page: { limit: number; after?: ListingPosition },
): Promise<Array<EventRow & { position: ListingPosition }>> {
  const rows = await db
    .select({
      id: sql<string>`${events.id}::text`,
      name: events.name,
      device_id: events.deviceId,
      profile_id: events.profileId,
      project_id: events.projectId,
      session_id: events.sessionId,
      created_at: isoText(events.createdAt),
      created_ms: sql<number>`floor(extract(epoch from ${events.createdAt}) * 1000)::float8`,
      path: events.path,
      origin: events.origin,
      title: events.title,
      referrer: events.referrer,
      referrer_name: events.referrerName,
      referrer_type: events.referrerType,
      duration: events.duration,
      revenue: events.revenue,
      properties: sql<Record<string, string>>`flatten_properties(${events.properties})`,
      country: events.country,
      region: events.region,
      city: events.city,
      latitude: events.latitude,
      longitude: events.longitude,
      device: events.device,
      brand: events.brand,
      model: events.model,
      browser: events.browser,
      browser_version: events.browserVersion,
      os: events.os,
      os_version: events.osVersion,
      utm_source: events.utmSource,
      utm_medium: events.utmMedium,
      utm_campaign: events.utmCampaign,
      utm_term: events.utmTerm,
      utm_content: events.utmContent,
    })
    .from(events)
    .where(
      and(
        eq(events.projectId, listing.projectId),
        listing.profileId === undefined ? undefined : eq(events.profileId, listing.profileId),
        gte(events.createdAt, new Date(listing.start)),
        lt(events.createdAt, new Date(listing.end)),
        listing.names.length > 0 ? sql`${events.name} = any(${sql.param(listing.names)}::text[])` : undefined,
        page.after
          ? sql`(${events.createdAt}, ${events.id}) < (${new Date(page.after.createdAt).toISOString()}::timestamptz, ${page.after.id}::uuid)`
          : undefined,
        eventConditions(listing.filters),
      ),
    )
    .orderBy(desc(events.createdAt), desc(events.id))
    .limit(page.limit);
  return rows.map(({ created_ms, ...row }) => ({
    ...row,
    duration: Number(row.duration),
    revenue: Number(row.revenue),
    imported_at: null,
    sdk_name: null,
    sdk_version: null,
    groups: [],
    position: { createdAt: Number(created_ms), id: row.id },
  }));
}
