import { bigint, boolean, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { unitStart } from "./rollups";
import { bitVarying, dayBlock } from "./session-bits";

// ---------------------------------------------------------------------------------------------
// Bit strings per project day over the day's events, for `/export/charts` under filters on two
// or more columns (src/queries/charts/event-bits.ts), built by refresh_event_bits
// (src/db/routines/refresh_event_bits.sql) with the chart day rows, under their watermark and in
// the zone they record (event_pair_timezones). A chart filters on each event's own columns, not
// on its session's, so the session strings (session-bits.ts) cannot answer it: these number a
// day's events instead. Events never change, so a day's events keep their numbers and a refresh
// only sets the bits of the new ones, in the day's last blocks (day_block_bits(), as for sessions).

/**
 * How many events each project day has numbered (0 … size - 1): the next event of the day takes
 * `size`. A full build numbers a day's events by time, then id; a refresh numbers the new ones after
 * them in the same order.
 */
export const eventDaySizes = pgTable(
  "event_day_sizes",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    size: integer("size").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day] })],
);

/**
 * Per (project day, block, column, value): the block's events with that value. The columns are
 * the event name and CHART_PAIR_COLUMNS (src/lib/dimensions.ts); `name` is the value, null when
 * it is not set (NULL or ""), so that `isNot` and `isNull` keep those events. A block where a
 * value has no event has no row for it.
 */
export const eventDayBits = pgTable(
  "event_day_bits",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    block: dayBlock(),
    dimension: text("dimension").notNull(),
    name: text("name"),
    events: bitVarying("events").notNull(),
  },
  (t) => [
    // Reads by (project, column, values, days), like the session strings.
    index("event_day_bits_read_idx").on(t.projectId, t.dimension, t.name, t.day),
    // A refresh takes out and writes back a touched block's strings; a chart's breakdown reads each
    // block's strings of one column.
    index("event_day_bits_day_idx").on(t.projectId, t.day, t.block, t.dimension),
  ],
);

/**
 * Which property paths have event strings in a project day, as property_day_paths
 * (session-bits.ts) says for the session strings: an event is under the value its properties hold
 * at each path (`property:` and the path as a JSON array), while the day holds at most
 * property_day_value_limit() values of the path, among its first property_day_path_limit() paths.
 * `names` are the path's values so far, NULL once it passed a bound (its strings of the day are
 * then gone); `marked`, that some event of the day holds an object, an array or a text over 256
 * bytes there, whose text no string holds, so that only `is` over plain values reads the strings.
 */
export const eventPropertyDayPaths = pgTable(
  "event_property_day_paths",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    path: text("path").array().notNull(),
    names: text("names").array(),
    marked: boolean("marked").notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.path, t.day] })],
);

/**
 * Whose each numbered event is, for the `user` and `session` segments of a chart under the
 * strings: per project, segment (`user`: the visitor's profile id, `session`: the session id), day
 * and page of member_page_events() numbers (page = number / that), a 64-bit hash of each of the
 * page's events' member in number order (hashtextextended(id, 0)). A chart reads the entries at
 * the set bits of its mask and counts distinct hashes. `members` is stored PLAIN (migration 0087):
 * a page of 896 hashes (7 KB) stays in its heap row, neither compressed nor moved out of line, so
 * a chart reads a page for all of its entries with one index probe, and no array is detoasted.
 * Hashes, not numbers, keep the refresh free of a lookup table the session family owns: two ids of
 * one bucket would have to share a hash to be counted once (about 3 in 10^8 for a million
 * members), a risk docs/design/filtered-dashboards.md notes.
 */
export const eventDayMembers = pgTable(
  "event_day_members",
  {
    projectId: text("project_id").notNull(),
    segment: text("segment").notNull(),
    day: unitStart("day"),
    page: integer("page").notNull(),
    members: bigint("members", { mode: "bigint" }).array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.segment, t.day, t.page] })],
);

/**
 * Each numbered event's representative (event_day_firsts), per the same pages as
 * event_day_members: entry n % member_page_events() + 1 of page n / member_page_events() is the
 * number of event n's representative in its day. A table apart, since a row must fit a page of
 * 8 KB and the two arrays of 896 do not: each path probes only the pages it reads (the lookups the
 * hashes, the representatives these). `firsts` is stored PLAIN like `members` (migration 0107).
 */
export const eventDayFirstPages = pgTable(
  "event_day_first_pages",
  {
    projectId: text("project_id").notNull(),
    segment: text("segment").notNull(),
    day: unitStart("day"),
    page: integer("page").notNull(),
    firsts: integer("firsts").array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.segment, t.day, t.page] })],
);

/**
 * The representative of each (project, segment, day, member) with an event in the day: its
 * lowest-numbered event there, `number`, and that event's values of the name and of
 * CHART_PAIR_COLUMNS (src/lib/dimensions.ts, in that order, "" as NULL). A refresh only appends
 * numbers, so a representative never changes once written; each new event of a member's day is
 * compared with it, and where a column's value (or the name) differs, its bit is set in the day's
 * `deviant:<segment>` string of that column (event_day_bits, `name` the column), while each
 * representative has its bit in the day's `first:<segment>` string. A chart's distinct members of a
 * day are then its matching representatives plus those of its matching deviants whose
 * representative does not match (src/queries/charts/event-firsts.ts), found through
 * event_day_first_pages. `member` is the hash event_day_members keeps.
 */
export const eventDayFirsts = pgTable(
  "event_day_firsts",
  {
    projectId: text("project_id").notNull(),
    segment: text("segment").notNull(),
    day: unitStart("day"),
    member: bigint("member", { mode: "bigint" }).notNull(),
    number: integer("number").notNull(),
    chartValues: text("chart_values").array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.segment, t.day, t.member] })],
);

/**
 * The timezone each project's event strings were built in. A project without a record, or whose
 * timezone is another, has its strings built again from all of its events by the next refresh, and
 * no chart reads them until then.
 */
export const eventBitTimezones = pgTable("event_bit_timezones", {
  projectId: text("project_id").primaryKey(),
  timezone: text("timezone").notNull(),
});
