import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";

/**
 * One row per (project, profile_id) with an event: what the profiles listing (contract A3) sorts
 * and selects by, so a page reads a few index rows instead of grouping the events of every
 * visitor. Kept by refresh_profile_summaries (src/db/routines/refresh_profile_summaries.sql) from
 * the events committed since its last run: first and last event, whether the visitor ever
 * identified, the attributes of its latest event, its event count by addition, and its session
 * count recounted for the profiles whose events or sessions changed.
 */
export const profileSummaries = pgTable(
  "profile_summaries",
  {
    projectId: text("project_id").notNull(),
    profileId: text("profile_id").notNull(),
    firstSeenAt: timestamp("first_seen_at", { withTimezone: true, precision: 3 }).notNull(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, precision: 3 }).notNull(),
    /** The latest event (ties on time broken by id): its attributes are the profile's last-known ones. */
    lastEventId: uuid("last_event_id").notNull(),
    /** Some event of it has profile_id <> device_id. */
    identified: boolean("identified").notNull(),
    /** Its latest identified event (profile_id <> device_id); null when it has none (/engagement). */
    lastIdentifiedAt: timestamp("last_identified_at", { withTimezone: true, precision: 3 }),
    country: text("country"),
    city: text("city"),
    device: text("device"),
    browser: text("browser"),
    eventCount: bigint("event_count", { mode: "number" }).notNull(),
    /** Sessions whose visitor (first event's profile_id) it is. */
    sessionCount: integer("session_count").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.profileId] }),
    // The listing's keyset order: first seen, then id.
    index("profile_summaries_project_first_seen_idx").on(t.projectId, t.firstSeenAt),
    // /engagement over the whole history: the identified profiles' latest identified events alone.
    index("profile_summaries_last_identified_idx")
      .on(t.projectId, t.lastIdentifiedAt)
      .where(sql`${t.lastIdentifiedAt} is not null`),
  ],
);
