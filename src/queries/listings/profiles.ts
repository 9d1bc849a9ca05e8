import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { events, profileSummaries, profiles, sessions } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";
import type { ProfileRow } from "../../schemas/listings";
import { eventConditions } from "../filter-conditions";
import type { TimeWindow } from "../insights/model";
import { isoText } from "../sql-helpers";
import type { ListingPosition } from "./events";
import { NO_GROUPS, profileRecordColumns } from "./profile-record";

/** The attributes of a profile's latest event that `/profiles` matches exactly. */
export const LAST_KNOWN_ATTRIBUTES = ["country", "city", "device", "browser"] as const;
export type LastKnownAttribute = (typeof LAST_KNOWN_ATTRIBUTES)[number];

/** What `/profiles` lists (contract A3): every profile with an event, selected and ordered by first seen. */
export interface ProfileListing {
  projectId: string;
  /** Only profiles with an event in it; undefined for the lifetime listing. */
  window?: TimeWindow;
  /** An event of the profile (in the window) passes them all. */
  filters: Filter[];
  /** Each a case-insensitive literal substring of id, email, first or last name, or "first last". */
  nameTokens: string[];
  email?: string;
  lastKnown: Partial<Record<LastKnownAttribute, string>>;
  identified?: boolean;
  /** Last seen more than this many days (× 24 h) ago. */
  inactiveDays?: number;
  /** At least this many of its sessions start in the window (ever, for the lifetime listing). */
  minSessions?: number;
  /** An event of this name (in the window). */
  performedEvent?: string;
  order: "asc" | "desc";
}

const profileEvent = alias(events, "profile_event");
const profileSession = alias(sessions, "profile_session");

/** Some event of the summarised profile in the listing's window passing `matches`. */
function someEventOf(listing: ProfileListing, ...matches: Array<SQL | undefined>): SQL {
  const e = profileEvent;
  const s = profileSummaries;
  return sql`exists (select 1 from ${events} as ${sql.identifier("profile_event")} where ${and(
    eq(e.projectId, s.projectId),
    eq(e.profileId, s.profileId),
    listing.window ? gte(e.createdAt, new Date(listing.window.start)) : undefined,
    listing.window ? lt(e.createdAt, new Date(listing.window.end)) : undefined,
    ...matches,
  )})`;
}

/** At least `count` sessions of the profile start in the window, counting no further than that. */
function sessionsAtLeast(window: TimeWindow, count: number): SQL {
  const x = profileSession;
  const s = profileSummaries;
  return sql`(select count(*) from (select 1 from ${sessions} as ${sql.identifier("profile_session")} where ${and(
    eq(x.projectId, s.projectId),
    eq(x.profileId, s.profileId),
    gte(x.startedAt, new Date(window.start)),
    lt(x.startedAt, new Date(window.end)),
  )} limit ${count}) as enough) >= ${count}`;
}

const contains = (text: SQL, token: string) => sql`strpos(lower(${text}), lower(${token})) > 0`;

function nameMatches(token: string): SQL {
  const p = profiles;
  const fullName = sql`coalesce(${p.firstName}, '') || ' ' || coalesce(${p.lastName}, '')`;
  return sql`(${sql.join(
    [
      contains(sql`${profileSummaries.profileId}`, token),
      contains(sql`coalesce(${p.email}, '')`, token),
      contains(sql`coalesce(${p.firstName}, '')`, token),
      contains(sql`coalesce(${p.lastName}, '')`, token),
      contains(fullName, token),
    ],
    sql` or `,
  )})`;
}

function listingConditions(listing: ProfileListing, after: ListingPosition | undefined): SQL | undefined {
  const s = profileSummaries;
  const { window } = listing;
  const filtered = listing.filters.length > 0;
  return and(
    eq(s.projectId, listing.projectId),
    // A profile with an event in the window was first seen before its end and last seen after its
    // start: the summary rules most profiles out before an index probe of their events.
    window ? lt(s.firstSeenAt, new Date(window.end)) : undefined,
    window ? gte(s.lastSeenAt, new Date(window.start)) : undefined,
    window || filtered ? someEventOf(listing, eventConditions(listing.filters, profileEvent)) : undefined,
    listing.performedEvent === undefined
      ? undefined
      : someEventOf(listing, eq(profileEvent.name, listing.performedEvent)),
    ...LAST_KNOWN_ATTRIBUTES.map((attribute) => {
      const value = listing.lastKnown[attribute];
      return value === undefined ? undefined : eq(s[attribute], value);
    }),
    listing.identified === undefined ? undefined : eq(s.identified, listing.identified),
    listing.inactiveDays === undefined
      ? undefined
      : sql`${s.lastSeenAt} < now() - make_interval(days => ${listing.inactiveDays})`,
    listing.minSessions === undefined
      ? undefined
      : window
        ? sessionsAtLeast(window, listing.minSessions)
        : gte(s.sessionCount, listing.minSessions),
    ...listing.nameTokens.map(nameMatches),
    listing.email === undefined ? undefined : contains(sql`coalesce(${profiles.email}, '')`, listing.email),
    after
      ? listing.order === "desc"
        ? sql`(${s.firstSeenAt}, ${s.profileId} collate "C") < (${new Date(after.createdAt).toISOString()}::timestamptz, ${after.id}::text collate "C")`
        : sql`(${s.firstSeenAt}, ${s.profileId} collate "C") > (${new Date(after.createdAt).toISOString()}::timestamptz, ${after.id}::text collate "C")`
      : undefined,
  );
}

/**
 * One page of `/profiles`: `limit` rows after `after`, by first seen then id (byte order), both
 * ascending or both descending, from the profile summaries (src/db/schema/profile-summaries.ts)
 * with the stored profile record beside each.
 */
export async function listProfiles(
  db: Database,
  listing: ProfileListing,
  page: { limit: number; after?: ListingPosition },
): Promise<Array<ProfileRow & { position: ListingPosition }>> {
  const s = profileSummaries;
  const direction = sql.raw(listing.order);
  const rows = await db
    .select({
      id: s.profileId,
      ...profileRecordColumns,
      project_id: s.projectId,
      is_external: s.identified,
      created_at: isoText(s.firstSeenAt),
      created_ms: sql<number>`floor(extract(epoch from ${s.firstSeenAt}) * 1000)::float8`,
      last_seen_at: isoText(s.lastSeenAt),
    })
    .from(s)
    .leftJoin(profiles, and(eq(profiles.projectId, s.projectId), eq(profiles.id, s.profileId)))
    .where(listingConditions(listing, page.after))
    .orderBy(sql`${s.firstSeenAt} ${direction}`, sql`${s.profileId} collate "C" ${direction}`)
    .limit(page.limit);
  return rows.map(({ created_ms, ...row }) => ({
    ...row,
    ...NO_GROUPS,
    position: { createdAt: Number(created_ms), id: row.id },
  }));
}
