import { sql } from "drizzle-orm";
import { customType, index, integer, pgTable, primaryKey, smallint, text, unique } from "drizzle-orm/pg-core";
import { unitStart } from "./rollups";

/**
 * A `bit varying` column. Drizzle's `bit` has a fixed length; these strings are as long as their
 * day has sessions.
 */
export const bitVarying = customType<{ data: string }>({ dataType: () => "bit varying" });

/** The block of a day's session numbers that a string covers (its numbers from block × 524,288). */
export const dayBlock = () => integer("block").notNull();

// ---------------------------------------------------------------------------------------------
// Bit strings per project day over the day's sessions, built by refresh_session_bits
// (src/db/routines/refresh_session_bits.sql). A day's sessions are numbered 0… (their day
// ordinal, session_day_ordinals). The numbers are cut into blocks of day_block_bits() (524,288;
// src/db/routines/day_block_bits.sql): block k of a string holds the bits of the numbers from
// k × 524,288, one per number up to the block's last (rounded up to whole bytes), so the strings of
// a day's block combine with `&` and `|` and count with `bit_count`, and a refresh rewrites only
// the blocks of the sessions it touched. They answer two or three filters at once
// (docs/design/filtered-dashboards.md): the AND of the filters' strings is the block's matching
// sessions, and the bit slices below turn it into sums. A block where a string has no set bit has
// no row for it.

/**
 * Each session's place in the strings of its day: its project day and its number there (its day
 * ordinal). A full build numbers a day's sessions in start order; the refresh then gives each new
 * session (or one a late earlier event moved to another day) the next number of its day and never
 * renumbers the others, so a refresh rewrites the bits of the sessions it touched, not the day.
 */
export const sessionDayOrdinals = pgTable(
  "session_day_ordinals",
  {
    projectId: text("project_id").notNull(),
    sessionId: text("session_id").notNull(),
    day: unitStart("day"),
    ordinal: integer("ordinal").notNull(),
    // The session's visitor as its strings hold it (visitor_ordinals; NULL without a profile):
    // the strings are written in a transaction of their own after the session's row, so when a
    // late earlier event gives the session another visitor, this is the one to count again.
    visitor: integer("visitor"),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.sessionId] }),
    // A day's last number, and no number twice.
    unique("session_day_ordinals_ordinal_key").on(t.projectId, t.day, t.ordinal),
  ],
);

/**
 * The timezone each project's strings were built in. The strings are folded in a transaction of
 * their own (refresh_session_strings), after the session rollups have recorded a new zone in
 * rollup_timezones, so they keep their own record: a project whose zone differs is built again.
 */
export const sessionBitTimezones = pgTable("session_bit_timezones", {
  projectId: text("project_id").primaryKey(),
  timezone: text("timezone").notNull(),
});

/**
 * Per (project day, block, breakdown dimension, value): the block's sessions with that value (`name`
 * null = not set, "" included; `prefix` as in the rollups).
 */
export const sessionDayBits = pgTable(
  "session_day_bits",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    block: dayBlock(),
    dimension: text("dimension").notNull(),
    name: text("name"),
    prefix: text("prefix"),
    sessions: bitVarying("sessions").notNull(),
  },
  (t) => [
    // Reads by (project, dimension, values, days), like the rollups.
    index("session_day_bits_read_idx").on(t.projectId, t.dimension, t.name, t.day),
    // A refresh deletes a touched block's strings; a breakdown under two filters reads each block's
    // strings of one dimension (through the index above, each day walked every value's days).
    index("session_day_bits_day_idx").on(t.projectId, t.day, t.block, t.dimension),
  ],
);

/**
 * Which property paths have strings in a project day. A session is under each value its events'
 * properties hold at a path (session_properties, a NULL-valued mark left out), in the dimension
 * `property:` followed by the path as a JSON array (`property:["plan"]`), as it is under each of
 * its paths and event names. A path has strings in a day while it holds at most
 * property_day_value_limit() values there and is among the first property_day_path_limit() paths
 * of the day (src/db/routines/property_day_value_limit.sql): `names` are its values so far, NULL
 * once it passed either bound, and its strings of the day are then gone. A path without a row has
 * no value that day, so its strings answer a filter on it (no session). A filter reads a path's
 * strings only over days where it has no NULL row.
 */
export const propertyDayPaths = pgTable(
  "property_day_paths",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    path: text("path").array().notNull(),
    names: text("names").array(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.path, t.day] })],
);

/**
 * Per (project day, block, measure, slice): bit `slice` of each session's measure, so that the sum of a
 * measure over a set of sessions is the sum over slices of 2^slice × bit_count(set & slice).
 * Measures: `bounce` and `timed` (one slice: the session bounced; it has a duration above 0),
 * `duration_ms` (of the timed sessions), `screen_views`, and `revenue` and `refunds` (a session's
 * positive and negative revenue, apart). A slice without any set bit is not stored.
 */
export const sessionDaySlices = pgTable(
  "session_day_slices",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    block: dayBlock(),
    measure: text("measure").notNull(),
    slice: smallint("slice").notNull(),
    sessions: bitVarying("sessions").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.block, t.measure, t.slice] })],
);

// ---------------------------------------------------------------------------------------------
// Bit strings per project day over the project's visitors: distinct visitors under two or three
// filters are the per-day AND of the filters' strings, ORed over the window and counted.

/** Visitors per string chunk: a chunk is 8 KB before TOAST compresses its runs of zeros. */
export const VISITOR_CHUNK_BITS = 65_536;

/**
 * Every visitor (profile) of a project numbered 0… in the order they were first seen. Numbers are
 * never reused or changed, so the visitor strings of different days line up.
 */
export const visitorOrdinals = pgTable(
  "visitor_ordinals",
  {
    projectId: text("project_id").notNull(),
    profileId: text("profile_id").notNull(),
    ordinal: integer("ordinal").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.profileId] }),
    unique("visitor_ordinals_ordinal_key").on(t.projectId, t.ordinal),
  ],
);

/**
 * Per (project day, breakdown dimension, value, chunk): the visitors with a session of that value
 * that day, bit `ordinal mod 65,536` of chunk `ordinal / 65,536`. Chunks without a visitor are not
 * stored, so a small value costs a few compressed chunks, not a string as long as the project's
 * visitors.
 */
export const visitorDayBits = pgTable(
  "visitor_day_bits",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    dimension: text("dimension").notNull(),
    name: text("name"),
    chunk: integer("chunk").notNull(),
    visitors: bitVarying("visitors").notNull(),
  },
  (t) => [
    index("visitor_day_bits_read_idx").on(t.projectId, t.dimension, t.name, t.day),
    index("visitor_day_bits_day_idx").on(t.projectId, t.day),
  ],
);

/**
 * The visitors whose sessions of one day have more than one value of a dimension (not set counts
 * as a value; for a path or an event name, some of the sessions hold it and some do not). The AND
 * of two filters' visitor strings counts such a visitor when one session matches one filter and
 * another session the other; those listed here are checked against the day's matching sessions
 * through their sessions' day ordinals (src/queries/insights/combined-visitors.ts).
 */
export const visitorDayMixed = pgTable(
  "visitor_day_mixed",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    dimension: text("dimension").notNull(),
    ordinal: integer("ordinal").notNull(),
    /** The day ordinals of the visitor's sessions that day. */
    sessions: integer("sessions").array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.dimension, t.ordinal] })],
);

// ---------------------------------------------------------------------------------------------
// Page strings per project day over the same session numbers: `/pages` under two or three
// filters ANDs each page's strings with the day's mask of matching sessions.

/**
 * Per (project day, block, page, title): the block's sessions with a screen view of the page (origin and
 * path as stored) whose greatest title there is `title`. A session has one title per page, so the
 * strings of a page's titles do not overlap: their counts add up to the page's sessions, and the
 * greatest title of the matching sessions is that of the greatest string with a match.
 */
export const pageDayBits = pgTable(
  "page_day_bits",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    block: dayBlock(),
    origin: text("origin"),
    path: text("path"),
    title: text("title"),
    sessions: bitVarying("sessions").notNull(),
  },
  (t) => [index("page_day_bits_day_idx").on(t.projectId, t.day, t.block)],
);

/**
 * Per (project day, block, page, measure, slice): bit `slice` of each session's measure on that page.
 * Measures: `repeat_views` (its screen views of the page beyond the first: most sessions view a
 * page once, so the slices stay sparse), `bounce` (the session bounced), `duration_ms` (its time
 * on the page) and `timed_views` (its views of the page with a time above 0). A slice without
 * any set bit is not stored.
 */
export const pageDaySlices = pgTable(
  "page_day_slices",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    block: dayBlock(),
    origin: text("origin"),
    path: text("path"),
    measure: text("measure").notNull(),
    slice: smallint("slice").notNull(),
    sessions: bitVarying("sessions").notNull(),
  },
  // Read per ranked page and block, NULL path or origin as "" (an index cannot equal NULL to NULL;
  // the query tells the two apart after it); a refresh deletes a touched block's slices through its prefix.
  (t) => [
    index("page_day_slices_page_idx").on(
      t.projectId,
      t.day,
      t.block,
      sql`coalesce(${t.path}, '')`,
      sql`coalesce(${t.origin}, '')`,
    ),
  ],
);
