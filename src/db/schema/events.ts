import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt, projectOf } from "./accounts";

/** Raw data the ingest pipeline writes (profiles, event metadata, events) and the sessions derived from it. */

export const profiles = pgTable(
  "profiles",
  {
    projectId: projectOf().notNull(),
    id: text("id").notNull(),
    firstName: text("first_name"),
    lastName: text("last_name"),
    email: text("email"),
    avatar: text("avatar"),
    isExternal: boolean("is_external").notNull().default(false),
    properties: jsonb("properties").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.id] })],
);

/** Display metadata for event names (export `includes=meta`). */
export const eventMeta = pgTable(
  "event_meta",
  {
    projectId: projectOf().notNull(),
    name: text("name").notNull(),
    description: text("description"),
    conversion: boolean("conversion").notNull().default(false),
    color: text("color"),
    icon: text("icon"),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name] })],
);

/** Device and technology of an event, and of a session (its first event's). */
const technologyColumns = () => ({
  device: text("device"),
  brand: text("brand"),
  model: text("model"),
  browser: text("browser"),
  browserVersion: text("browser_version"),
  os: text("os"),
  osVersion: text("os_version"),
});

/** UTM parameters of an event, and of a session (its first event's), as their own columns. */
const utmColumns = () => ({
  utmSource: text("utm_source"),
  utmMedium: text("utm_medium"),
  utmCampaign: text("utm_campaign"),
  utmTerm: text("utm_term"),
  utmContent: text("utm_content"),
});

/**
 * Raw events, written by the ingest pipeline and never updated by this service.
 * `ingest_xid` records the writing transaction so the derived-table routine can pick up exactly
 * the rows committed since its last run, even when writers commit out of order.
 */
export const events = pgTable(
  "events",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: text("project_id").notNull(),
    name: text("name").notNull(),
    deviceId: text("device_id").notNull(),
    profileId: text("profile_id").notNull(),
    sessionId: text("session_id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    path: text("path"),
    origin: text("origin"),
    title: text("title"),
    referrer: text("referrer"),
    referrerName: text("referrer_name"),
    referrerType: text("referrer_type"),
    /** Time on page in milliseconds (screen views). */
    duration: integer("duration").notNull().default(0),
    /** Revenue in cents. */
    revenue: bigint("revenue", { mode: "number" }).notNull().default(0),
    properties: jsonb("properties").$type<Record<string, unknown>>().notNull().default({}),
    country: text("country"),
    region: text("region"),
    city: text("city"),
    latitude: doublePrecision("latitude"),
    longitude: doublePrecision("longitude"),
    ...technologyColumns(),
    ...utmColumns(),
    ingestXid: bigint("ingest_xid", { mode: "number" })
      .notNull()
      .default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [
    // Time-window scans and the export keyset order (created_at desc, id desc) in one index.
    index("events_project_time_idx").on(t.projectId, t.createdAt, t.id),
    // The step events of a funnel: a window's events of a few names, without reading the others.
    // Its migration (drizzle/0044) adds INCLUDE (session_id, profile_id), which drizzle cannot
    // declare: the funnel's groups come from the index alone (an index-only scan, no heap page).
    index("events_project_name_time_idx").on(t.projectId, t.name, t.createdAt),
    // Recomputing a touched session reads all of its events.
    index("events_project_session_idx").on(t.projectId, t.sessionId),
    // A profile's events, newest first (/profiles/{id}, its metrics, the listing's window checks).
    index("events_project_profile_time_idx").on(t.projectId, t.profileId, t.createdAt, t.id),
    // Derived-table routine: rows committed since the last run. Append-ordered, so BRIN is tiny.
    index("events_ingest_xid_idx").using("brin", t.ingestXid),
    // The revenue of page rows: the few screen views that carry revenue (src/queries/insights/page-revenue.ts).
    index("events_screen_view_revenue_idx")
      .on(t.projectId, t.createdAt)
      .where(sql`${t.name} = 'screen_view' and ${t.revenue} <> 0`),
  ],
);

/**
 * One row per (project, session_id), derived from events by `refresh_derived()` only
 * (src/db/routines/refresh_session_rollups.sql).
 * Attributes are those of the session's first event; entry/exit are its first/last screen view.
 */
export const sessions = pgTable(
  "sessions",
  {
    projectId: text("project_id").notNull(),
    id: text("id").notNull(),
    profileId: text("profile_id").notNull(),
    deviceId: text("device_id").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true, precision: 3 }).notNull(),
    endedAt: timestamp("ended_at", { withTimezone: true, precision: 3 }).notNull(),
    durationMs: bigint("duration_ms", { mode: "number" }).notNull(),
    eventCount: integer("event_count").notNull(),
    screenViewCount: integer("screen_view_count").notNull(),
    isBounce: boolean("is_bounce").notNull(),
    revenue: bigint("revenue", { mode: "number" }).notNull(),
    entryPath: text("entry_path"),
    entryOrigin: text("entry_origin"),
    exitPath: text("exit_path"),
    exitOrigin: text("exit_origin"),
    referrer: text("referrer"),
    referrerName: text("referrer_name"),
    referrerType: text("referrer_type"),
    ...utmColumns(),
    country: text("country"),
    region: text("region"),
    city: text("city"),
    ...technologyColumns(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    index("sessions_project_started_idx").on(t.projectId, t.startedAt),
    // A profile's sessions, newest first (/profiles/{id}/sessions, its metrics, session counts).
    index("sessions_project_profile_started_idx").on(t.projectId, t.profileId, t.startedAt),
    // Sessions are written in the order they start, and the planner costs a BRIN range by the
    // start's own correlation (the btree above is costed by project_id's): filtered windows of
    // days to weeks then read their pages, not the whole table (7 days at 10M events 410 → 90 ms).
    index("sessions_started_brin_idx").using("brin", t.startedAt).with({ pages_per_range: 32 }),
  ],
);

/** Watermarks of the derived-table routine (one row per routine). */
export const derivedState = pgTable("derived_state", {
  name: text("name").primaryKey(),
  /** Every event whose ingest_xid is below this has been folded in. */
  processedXid: bigint("processed_xid", { mode: "number" }).notNull().default(0),
  lastRunAt: timestamp("last_run_at", { withTimezone: true, precision: 3 }),
});
