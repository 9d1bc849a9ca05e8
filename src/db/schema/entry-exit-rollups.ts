import { bigint, integer, pgTable, text, unique } from "drizzle-orm/pg-core";
import { unitStart } from "./rollups";

/**
 * Entry and exit pages per hour and per project day (`/pages/entry_exit`): the sessions with a
 * screen view by the page of their first (`mode` 'entry') or last ('exit') screen view, with their
 * bounces, all their screen views and their revenue. Derived from `sessions` by `refresh_derived()`
 * only (src/db/routines/refresh_entry_exit_rollups.sql), by difference as sessions change; an hour
 * or a day holds the sessions that started in it, like the session rollups.
 */
const entryExitAggregates = () => ({
  projectId: text("project_id").notNull(),
  mode: text("mode").notNull(),
  origin: text("origin"),
  path: text("path"),
  sessions: integer("sessions").notNull(),
  bounces: integer("bounces").notNull(),
  screenViews: bigint("screen_views", { mode: "number" }).notNull(),
  revenue: bigint("revenue", { mode: "number" }).notNull(),
});

export const entryExitRollups = pgTable(
  "entry_exit_rollups",
  { ...entryExitAggregates(), hour: unitStart("hour") },
  (t) => [
    // Reads by (project, mode, hours); the key of the refresh's additions, a null page included.
    unique("entry_exit_rollups_key").on(t.projectId, t.mode, t.hour, t.origin, t.path).nullsNotDistinct(),
  ],
);

/** The same per day of the project's timezone, built for the timezone in `rollup_timezones`. */
export const entryExitDayRollups = pgTable(
  "entry_exit_day_rollups",
  { ...entryExitAggregates(), day: unitStart("day") },
  (t) => [
    unique("entry_exit_day_rollups_key").on(t.projectId, t.mode, t.day, t.origin, t.path).nullsNotDistinct(),
  ],
);
