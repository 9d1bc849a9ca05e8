import { boolean, date, integer, pgTable, primaryKey, smallint, text, unique } from "drizzle-orm/pg-core";

// ---------------------------------------------------------------------------------------------
// Per-profile activity by local day of the project's timezone, and the two small aggregates that
// /active_users, /engagement and the retention routes read (contract A6) instead of the events of
// the whole history. Kept by refresh_profile_activity (src/db/routines/refresh_profile_activity.sql)
// inside refresh_derived(): the events since its watermark are merged into `profile_days`, and the
// aggregates change by difference for the profiles they touched (their old contribution
// subtracted, the new one added), so every count stays exact. Built for the timezone recorded in
// `activity_timezones`; a project whose timezone changed is rebuilt whole on the next run.

/** `date` columns as `YYYY-MM-DD` strings: a local calendar day has no instant. */
const localDate = (name: string) => date(name, { mode: "string" });

/** One row per (project, profile, local day) with an event: its events, and the identified ones. */
export const profileDays = pgTable(
  "profile_days",
  {
    projectId: text("project_id").notNull(),
    profileId: text("profile_id").notNull(),
    day: localDate("day").notNull(),
    events: integer("events").notNull(),
    /** Events with profile_id <> device_id. */
    identifiedEvents: integer("identified_events").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.profileId, t.day] })],
);

/**
 * Users per local day, by how many days before it the same user was last active (`gap`; 91 for
 * "not in the 90 days before", the most `days` can ask) and whether that day is the user's last
 * (`last`). `identified`: counting only identified events (the day of a user with none is no row).
 * A user is active on D − n + 1 … D for the first time in that span on exactly one day d, the
 * one with gap ≥ n − (D − d): so every DAU/WAU/MAU point is a sum over these rows.
 */
export const activeUserDays = pgTable(
  "active_user_days",
  {
    projectId: text("project_id").notNull(),
    day: localDate("day").notNull(),
    identified: boolean("identified").notNull(),
    gap: smallint("gap").notNull(),
    last: boolean("last").notNull(),
    users: integer("users").notNull(),
  },
  (t) => [unique("active_user_days_key").on(t.projectId, t.identified, t.day, t.gap, t.last)],
);

/**
 * Identified users per Monday week of activity, by cohort (the week of their first identified event
 * ever) and their next week of activity (null: none yet). A cohort cell `on` is a sum over `week`;
 * `on_or_after` up to week W counts each user once, on its last active week up to W (next_week
 * after W or null); a week's next-week return is the rows with next_week = week + 7 days.
 */
export const retentionWeeks = pgTable(
  "retention_weeks",
  {
    projectId: text("project_id").notNull(),
    cohort: localDate("cohort").notNull(),
    week: localDate("week").notNull(),
    nextWeek: localDate("next_week"),
    users: integer("users").notNull(),
  },
  (t) => [unique("retention_weeks_key").on(t.projectId, t.cohort, t.week, t.nextWeek).nullsNotDistinct()],
);

/** The timezone each project's activity rows were built in. */
export const activityTimezones = pgTable("activity_timezones", {
  projectId: text("project_id").primaryKey(),
  timezone: text("timezone").notNull(),
});
