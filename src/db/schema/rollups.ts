import { bigint, boolean, index, integer, pgTable, text, timestamp, unique } from "drizzle-orm/pg-core";

// ---------------------------------------------------------------------------------------------
// Hourly and daily rollups, derived from `sessions` (and their screen views) by `refresh_derived()`
// only (src/db/routines/refresh_rollups.sql; visitor sketches: refresh_visitor_sketches.sql).
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
export const unitStart = (name: "hour" | "day") =>
  timestamp(name, { withTimezone: true, precision: 3 }).notNull();

/**
 * Session aggregates per hour of the sessions' start. Maintained by difference as sessions change
 * (src/db/routines/refresh_rollups.sql).
 */
export const sessionRollups = pgTable(
  "session_rollups",
  { ...sessionAggregates(), hour: unitStart("hour") },
  (t) => [
    // Reads by (project, dimension, hours); the key of the refresh's additions, a null value included.
    unique("session_rollups_key").on(t.projectId, t.dimension, t.hour, t.name, t.prefix).nullsNotDistinct(),
  ],
);

/**
 * The same session aggregates per day of the project's timezone (`day` is the local midnight),
 * built for the timezone recorded in `rollup_timezones`.
 */
export const sessionDayRollups = pgTable(
  "session_day_rollups",
  { ...sessionAggregates(), day: unitStart("day") },
  (t) => [
    unique("session_day_rollups_key")
      .on(t.projectId, t.dimension, t.day, t.name, t.prefix)
      .nullsNotDistinct(),
  ],
);

/**
 * Session aggregates per day of the project's timezone and pair of breakdown values: the sessions
 * of the day that have value `name` of `dimension` and value `by_name` of `by_dimension`. One row
 * set per unordered pair of dimensions, `dimension` first in the order of session_dimensions(), so
 * a filter on either answers a breakdown by the other. Maintained by difference as sessions change
 * (src/db/routines/refresh_pair_rollups.sql); built for the timezone recorded in `rollup_timezones`.
 */
export const sessionPairRollups = pgTable(
  "session_pair_rollups",
  {
    ...sessionAggregates(),
    day: unitStart("day"),
    byDimension: text("by_dimension").notNull(),
    byName: text("by_name"),
    byPrefix: text("by_prefix"),
  },
  (t) => [
    // Reads by (project, pair, days); the key of the refresh's additions, a null value included.
    unique("session_pair_rollups_key")
      .on(t.projectId, t.dimension, t.byDimension, t.day, t.name, t.prefix, t.byName, t.byPrefix)
      .nullsNotDistinct(),
  ],
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

/**
 * Each event name a session holds, with the session's start. Derived with the session pages (per
 * touched session, rewritten from its events). It answers event filters on `name` ("sessions with
 * an `add_to_cart` event") by index, and is the source of the rollup rows of the `name` dimension.
 */
export const sessionNames = pgTable(
  "session_names",
  {
    projectId: text("project_id").notNull(),
    sessionId: text("session_id").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true, precision: 3 }).notNull(),
    name: text("name").notNull(),
  },
  (t) => [
    // A session's names are found through its start, as its pages are.
    index("session_names_project_started_idx").on(t.projectId, t.startedAt),
    // Covers `name is …` filters: the matching sessions of a window without touching the table.
    index("session_names_project_name_idx").on(t.projectId, t.name, t.startedAt, t.sessionId),
  ],
);

/**
 * Each property value a session's events carry, with the session's start: one row per distinct
 * (key path, text) of a leaf (a string, number or boolean; not JSON null) of any of its events'
 * properties, the path as `#>>` reads it (array elements by their position), the text as `#>>`
 * prints it (src/db/routines/property_leaves.sql). A NULL value marks a path where some event holds
 * what the rows do not: an object or an array (printed as JSON), or a text over 256 bytes. Derived
 * with the session names, per touched session (src/db/routines/refresh_session_properties.sql). It
 * answers property filters that keep sessions with a matching event ("an event whose `plan` is
 * `pro`", "… starts with `pro`") by index, where the events' JSON would be read for every session
 * of the window; the events are read only for the sessions a NULL row marks.
 */
export const sessionProperties = pgTable(
  "session_properties",
  {
    projectId: text("project_id").notNull(),
    sessionId: text("session_id").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true, precision: 3 }).notNull(),
    path: text("path").array().notNull(),
    value: text("value"),
  },
  (t) => [
    // A session's values are found through its start, as its pages and names are.
    index("session_properties_project_started_idx").on(t.projectId, t.startedAt),
    // Covers property filters: `is` by its values, the other operators by the path's rows; the
    // matching sessions of a window without the table.
    index("session_properties_project_value_idx").on(t.projectId, t.path, t.value, t.startedAt, t.sessionId),
  ],
);

/**
 * Page aggregates per hour of the sessions' start. `title` is part of the key and the greatest one
 * is taken when the rows are read, so that a session's pages can be subtracted and added again as
 * it changes (src/db/routines/refresh_rollups.sql).
 */
export const pageRollups = pgTable("page_rollups", { ...pageAggregates(), hour: unitStart("hour") }, (t) => [
  // Reads by (project, hours); the key of the refresh's additions.
  unique("page_rollups_key").on(t.projectId, t.hour, t.origin, t.path, t.title).nullsNotDistinct(),
]);

/** The same page aggregates per day of the project's timezone (`day` is the local midnight). */
export const pageDayRollups = pgTable(
  "page_day_rollups",
  { ...pageAggregates(), day: unitStart("day") },
  (t) => [
    unique("page_day_rollups_key").on(t.projectId, t.day, t.origin, t.path, t.title).nullsNotDistinct(),
  ],
);

/**
 * Page aggregates per day of the project's timezone and value of each breakdown dimension: the
 * pages screened in the day's sessions with value `name` of `dimension` (null = not set). A filter
 * on one dimension answers top pages from these rows. `title` is part of the key, the greatest one
 * is taken when they are read, so that a session's pages can be subtracted and added again as it
 * changes (src/db/routines/refresh_page_dimension_rollups.sql); built for the timezone recorded in
 * `rollup_timezones`.
 */
export const pageDimensionRollups = pgTable(
  "page_dimension_rollups",
  { ...pageAggregates(), day: unitStart("day"), dimension: text("dimension").notNull(), name: text("name") },
  (t) => [
    // Reads by (project, dimension, days, values); the key of the refresh's additions.
    unique("page_dimension_rollups_key")
      .on(t.projectId, t.dimension, t.day, t.name, t.origin, t.path, t.title)
      .nullsNotDistinct(),
  ],
);

/** The timezone each project's day sketches were built in. */
export const rollupTimezones = pgTable("rollup_timezones", {
  projectId: text("project_id").primaryKey(),
  timezone: text("timezone").notNull(),
});
