import { bigint, integer, pgTable, text, unique } from "drizzle-orm/pg-core";
import { unitStart } from "./rollups";

// ---------------------------------------------------------------------------------------------
// Event rollups for `/export/charts`, derived from events by `refresh_derived()` only
// (src/db/routines/refresh_event_rollups.sql).

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
    events: integer("events").notNull(),
    durationSum: bigint("duration_sum", { mode: "number" }).notNull(),
    durationMin: integer("duration_min").notNull(),
    durationMax: integer("duration_max").notNull(),
    revenueSum: bigint("revenue_sum", { mode: "number" }).notNull(),
    revenueMin: bigint("revenue_min", { mode: "number" }).notNull(),
    revenueMax: bigint("revenue_max", { mode: "number" }).notNull(),
  },
  (t) => [
    // Reads by (project, dimension, hours); the key of the refresh's additions, a null value included.
    unique("event_rollups_key").on(t.projectId, t.dimension, t.hour, t.name, t.value).nullsNotDistinct(),
  ],
);
