import { bigint, date, index, integer, pgTable, text, timestamp, unique } from "drizzle-orm/pg-core";
import { unitStart } from "./rollups";

// ---------------------------------------------------------------------------------------------
// Event rollups for `/export/charts`, derived from events by `refresh_derived()` only
// (src/db/routines/refresh_event_rollups.sql).

/** What both tables hold per row: the events' count and what the property segments need. */
const eventAggregates = () => ({
  events: integer("events").notNull(),
  durationSum: bigint("duration_sum", { mode: "number" }).notNull(),
  durationMin: integer("duration_min").notNull(),
  durationMax: integer("duration_max").notNull(),
  revenueSum: bigint("revenue_sum", { mode: "number" }).notNull(),
  revenueMin: bigint("revenue_min", { mode: "number" }).notNull(),
  revenueMax: bigint("revenue_max", { mode: "number" }).notNull(),
});

/**
 * Event aggregates per UTC hour of `created_at`, event name and breakdown value: one row with
 * `dimension` '' per (hour, name), and one per value of each rolled-up breakdown column (see
 * src/lib/dimensions.ts; `value` null = not set). They hold exactly the events whose `ingest_xid` is below the watermark
 * `derived_state('event_rollups')`, so a chart adds the events at or above it from `events`
 * and stays exact between refreshes. Duration and revenue carry what the property segments need.
 * Events never change once stored, so each refresh adds the new events into the rows.
 */
export const eventRollups = pgTable(
  "event_rollups",
  {
    projectId: text("project_id").notNull(),
    hour: unitStart("hour"),
    name: text("name").notNull(),
    dimension: text("dimension").notNull(),
    value: text("value"),
    ...eventAggregates(),
  },
  (t) => [
    // Reads by (project, dimension, hours); the key of the refresh's additions, a null value included.
    unique("event_rollups_key").on(t.projectId, t.dimension, t.hour, t.name, t.value).nullsNotDistinct(),
  ],
);

/**
 * The same aggregates per local day of the project (its timezone, UTC when it has none; recorded
 * in event_pair_timezones), event name and pair of values: value `value` of `dimension` and value
 * `by_value` of `by_dimension`, for every pair of CHART_PAIR_COLUMNS (src/lib/dimensions.ts), the
 * earlier one in that list first. A chart filtered on one column of a pair and split by the other
 * (or filtered on both), whose window and buckets start at local midnights of that zone, sums these
 * rows. Days, not hours: an hour's rows of a pair are nearly as many as its events (4.4 million rows,
 * 2.3 times the events' bytes, at 1M events), a day's far fewer. `first_at` is the row's earliest
 * event, the instant a chart buckets the row by (a local day can start at 01:00, so its start is not
 * always a midnight). Same watermark and maintenance as event_rollups: the same routine adds the
 * same new events into both, and rebuilds a project whose timezone changed.
 *
 * Rows of one column (`by_dimension` '') and of the event name alone (both '') sit beside the
 * pairs. Every row also counts its day's distinct visitors and sessions, which answer the `user`
 * and `session` segments by day when each breakdown group is one row a day (rollups.ts).
 */
export const eventPairRollups = pgTable(
  "event_pair_rollups",
  {
    projectId: text("project_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    firstAt: timestamp("first_at", { precision: 3, withTimezone: true }).notNull(),
    name: text("name").notNull(),
    dimension: text("dimension").notNull(),
    value: text("value"),
    byDimension: text("by_dimension").notNull(),
    byValue: text("by_value"),
    ...eventAggregates(),
    /** Distinct visitors (profile ids) with an event of the row's name and values that day. */
    profiles: integer("profiles").notNull().default(0),
    /** Distinct sessions with an event of the row's name and values that day. */
    sessions: integer("sessions").notNull().default(0),
  },
  (t) => [
    // A chart filters on one side of a pair and reads a value's days of one event name: the key
    // (also that of the refresh's additions) leads with the first side's value, the index with the
    // second's, so either side's filter reads only its own rows.
    unique("event_pair_rollups_key")
      .on(t.projectId, t.dimension, t.byDimension, t.value, t.name, t.day, t.byValue)
      .nullsNotDistinct(),
    index("event_pair_rollups_by_value_idx").on(
      t.projectId,
      t.dimension,
      t.byDimension,
      t.byValue,
      t.name,
      t.day,
      t.value,
    ),
  ],
);

/** The timezone each project's event pair rows were built in. */
export const eventPairTimezones = pgTable("event_pair_timezones", {
  projectId: text("project_id").primaryKey(),
  timezone: text("timezone").notNull(),
});
