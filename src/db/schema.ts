import { sql } from "drizzle-orm";
import {
  bigint,
  bit,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  unique,
  uuid,
} from "drizzle-orm/pg-core";

const createdAt = () => timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow();

export const organizations = pgTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

/** The organization a row belongs to; its rows go with it. */
const organizationOf = () =>
  text("organization_id")
    .notNull()
    .references(() => organizations.id, { onDelete: "cascade" });

export const projects = pgTable(
  "projects",
  {
    id: text("id").primaryKey(),
    organizationId: organizationOf(),
    name: text("name").notNull(),
    /** IANA zone; null means UTC. Date-only bounds and presets resolve in it. */
    timezone: text("timezone"),
    createdAt: createdAt(),
  },
  (t) => [index("projects_organization_idx").on(t.organizationId)],
);

/** The project a row belongs to; its rows go with it. */
const projectOf = () => text("project_id").references(() => projects.id, { onDelete: "cascade" });

export const clientType = pgEnum("client_type", ["read", "write", "root"]);

/**
 * API clients. `read`/`write` clients are scoped to one project; `root` clients to their whole
 * organization (project_id is null). Only a salted hash of the secret is stored.
 */
export const clients = pgTable(
  "clients",
  {
    id: uuid("id").primaryKey(),
    name: text("name").notNull(),
    type: clientType("type").notNull(),
    organizationId: organizationOf(),
    projectId: projectOf(),
    secretHash: text("secret_hash").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("clients_project_idx").on(t.projectId)],
);

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
    // Recomputing a touched session reads all of its events.
    index("events_project_session_idx").on(t.projectId, t.sessionId),
    // Derived-table routine: rows committed since the last run. Append-ordered, so BRIN is tiny.
    index("events_ingest_xid_idx").using("brin", t.ingestXid),
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

// ---------------------------------------------------------------------------------------------
// Hourly rollups, derived from `sessions` (and their screen views) by `refresh_derived()` only
// (src/db/routines/refresh_rollups.sql; days: refresh_day_sketches.sql).
// An hour holds the sessions whose first event falls in it (UTC hour), so the rows of the hours
// inside a window add up to exactly what the window's sessions give (contract section 5).

/**
 * The columns of a session rollup row, hourly or daily: one row with `dimension` '' for all
 * sessions, and one per value of each breakdown dimension (`name`, plus `prefix` on
 * region/city/versions; null = not set).
 */
const sessionAggregates = () => ({
  projectId: text("project_id").notNull(),
  dimension: text("dimension").notNull(),
  name: text("name"),
  prefix: text("prefix"),
  sessions: integer("sessions").notNull(),
  bounces: integer("bounces").notNull(),
  screenViews: bigint("screen_views", { mode: "number" }).notNull(),
  /** Sum of the durations above 0, and how many sessions had one (avg_session_duration). */
  durationMs: bigint("duration_ms", { mode: "number" }).notNull(),
  timedSessions: integer("timed_sessions").notNull(),
  revenue: bigint("revenue", { mode: "number" }).notNull(),
});

/** A rollup unit's start: the UTC hour, or the project's local midnight. */
const unitStart = (name: "hour" | "day") => timestamp(name, { withTimezone: true, precision: 3 }).notNull();

/** Session aggregates per hour of the sessions' start. */
export const sessionRollups = pgTable(
  "session_rollups",
  { ...sessionAggregates(), hour: unitStart("hour") },
  (t) => [index("session_rollups_project_dimension_hour_idx").on(t.projectId, t.dimension, t.hour)],
);

/** The same session aggregates per day of the project's timezone (`day` is the local midnight). */
export const sessionDayRollups = pgTable(
  "session_day_rollups",
  { ...sessionAggregates(), day: unitStart("day") },
  (t) => [index("session_day_rollups_project_dimension_day_idx").on(t.projectId, t.dimension, t.day)],
);

/** The columns of a page rollup row: per (origin, path) screened in the unit's sessions. */
const pageAggregates = () => ({
  projectId: text("project_id").notNull(),
  origin: text("origin"),
  path: text("path"),
  title: text("title"),
  sessions: integer("sessions").notNull(),
  pageviews: integer("pageviews").notNull(),
  bounces: integer("bounces").notNull(),
  /** Sum of the time-on-page values above 0, and how many screen views had one. */
  durationMs: bigint("duration_ms", { mode: "number" }).notNull(),
  timedViews: integer("timed_views").notNull(),
});

/**
 * Each (origin, path) that any event of a session carries, with the session's start and bounce
 * and that page's screen views. Derived with the hourly rollups (per hour of the session's
 * start). It answers event filters on `path` and `origin` ("sessions with an event on /pricing")
 * by index, and top pages under any filter without reading events; the page rollups are its sums.
 */
export const sessionPages = pgTable(
  "session_pages",
  {
    projectId: text("project_id").notNull(),
    sessionId: text("session_id").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true, precision: 3 }).notNull(),
    isBounce: boolean("is_bounce").notNull(),
    origin: text("origin"),
    path: text("path"),
    /** Of the page's screen views: the greatest title, how many, and their time on page. */
    title: text("title"),
    views: integer("views").notNull(),
    durationMs: bigint("duration_ms", { mode: "number" }).notNull(),
    timedViews: integer("timed_views").notNull(),
  },
  (t) => [
    index("session_pages_project_started_idx").on(t.projectId, t.startedAt),
    // Written in the order their sessions start: as for sessions, windows read only their pages.
    index("session_pages_started_brin_idx").using("brin", t.startedAt).with({ pages_per_range: 32 }),
    // Covers `path is …` filters: the matching sessions of a window without touching the table.
    index("session_pages_project_path_idx").on(t.projectId, t.path, t.startedAt, t.sessionId),
  ],
);

/** Page aggregates per hour of the sessions' start. */
export const pageRollups = pgTable("page_rollups", { ...pageAggregates(), hour: unitStart("hour") }, (t) => [
  index("page_rollups_project_hour_idx").on(t.projectId, t.hour),
]);

/** The same page aggregates per day of the project's timezone (`day` is the local midnight). */
export const pageDayRollups = pgTable(
  "page_day_rollups",
  { ...pageAggregates(), day: unitStart("day") },
  (t) => [index("page_day_rollups_project_day_idx").on(t.projectId, t.day)],
);

/** Registers of every visitor sketch: 2^15, a standard error of 0.57 % (±2 % is 3.5 σ). */
export const SKETCH_REGISTER_BITS = 32_768;

/** The columns of a sketch plane row. */
const sketchPlanes = () => ({
  projectId: text("project_id").notNull(),
  plane: smallint("plane").notNull(),
  registers: bit("registers", { dimensions: SKETCH_REGISTER_BITS }).notNull(),
});

/**
 * HyperLogLog sketches of the visitors of each hour's sessions (2^15 registers over a 64-bit
 * hashtextextended), stored as bit planes: plane k has the bit of every register whose value is
 * at least k. Planes merge with `bit_or`, and `bit_count` of a merged plane counts the registers
 * at or above k, which is all the estimator needs. Plain SQL, no extension.
 */
export const visitorSketches = pgTable(
  "visitor_sketches",
  { ...sketchPlanes(), hour: unitStart("hour") },
  (t) => [primaryKey({ columns: [t.projectId, t.hour, t.plane] })],
);

/**
 * The same sketches per day of the project's timezone (`day` is the local midnight), so a
 * month of visitors merges ~30 sketches instead of ~720. Built for the timezone recorded in
 * `rollup_timezones`; after a project's timezone changes, the next refresh rebuilds them.
 */
export const visitorDaySketches = pgTable(
  "visitor_day_sketches",
  { ...sketchPlanes(), day: unitStart("day") },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.plane] })],
);

/**
 * Visitor sketches per day of the project's timezone and value of each breakdown dimension (`name`
 * null = not set): the visitors of the sessions that started that day with that value. They answer
 * unique visitors under a filter on one dimension, like the day sketches do without a filter.
 * Most (day, value) groups hold few visitors, so a group is stored sparse while it is small: one
 * row, plane 0, whose `entries` are its distinct register entries (register << 6 | value, see
 * src/db/routines/visitor_entry.sql). A larger group is stored as the dense planes 1… of the other
 * sketch tables, in `registers`. Maintained by refresh_dimension_sketches
 * (src/db/routines/refresh_dimension_sketches.sql), by union as sessions arrive; built for the
 * timezone recorded in `rollup_timezones`.
 */
export const visitorDimensionSketches = pgTable(
  "visitor_dimension_sketches",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    dimension: text("dimension").notNull(),
    name: text("name"),
    /** 0 for the sparse row of a small group, else the plane of a dense one. */
    plane: smallint("plane").notNull(),
    registers: bit("registers", { dimensions: SKETCH_REGISTER_BITS }),
    entries: integer("entries").array(),
  },
  (t) => [
    // Reads by (project, dimension, values, days); one row per plane, a null name included.
    unique("visitor_dimension_sketches_key")
      .on(t.projectId, t.dimension, t.name, t.day, t.plane)
      .nullsNotDistinct(),
  ],
);

/** The timezone each project's day sketches were built in. */
export const rollupTimezones = pgTable("rollup_timezones", {
  projectId: text("project_id").primaryKey(),
  timezone: text("timezone").notNull(),
});

// ---------------------------------------------------------------------------------------------
// Event rollups for `/export/charts`, derived from events by `refresh_derived()` only
// (src/db/routines/refresh_event_rollups.sql).

/**
 * Event aggregates per UTC hour of `created_at`, event name and breakdown value: one row with
 * `dimension` '' per (hour, name), and one per value of each rolled-up breakdown column (see
 * src/lib/dimensions.ts; `value` null = not set). They hold exactly the events whose `ingest_xid` is below the watermark
 * `derived_state('event_rollups')`, so a chart adds the events at or above it from `events`
 * and stays exact between refreshes. Duration and revenue carry what the property segments need.
 */
export const eventRollups = pgTable(
  "event_rollups",
  {
    projectId: text("project_id").notNull(),
    hour: unitStart("hour"),
    name: text("name").notNull(),
    dimension: text("dimension").notNull(),
    value: text("value"),
    events: integer("events").notNull(),
    durationSum: bigint("duration_sum", { mode: "number" }).notNull(),
    durationMin: integer("duration_min").notNull(),
    durationMax: integer("duration_max").notNull(),
    revenueSum: bigint("revenue_sum", { mode: "number" }).notNull(),
    revenueMin: bigint("revenue_min", { mode: "number" }).notNull(),
    revenueMax: bigint("revenue_max", { mode: "number" }).notNull(),
  },
  (t) => [index("event_rollups_project_dimension_hour_idx").on(t.projectId, t.dimension, t.hour)],
);
