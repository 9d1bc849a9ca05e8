import { bigint, boolean, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The catalogue discovery reads (contract A2): event names, the keys each name's events set and
 * their most frequent values, over the whole history. Kept by addition from the events committed
 * since the last run (src/db/routines/refresh_catalogue.sql), so a discovery request reads a few
 * index rows and never scans `events`.
 */

/** Per project and event name: how many events, the first and the last. */
export const eventNameCatalogue = pgTable(
  "event_name_catalogue",
  {
    projectId: text("project_id").notNull(),
    name: text("name").notNull(),
    events: bigint("events", { mode: "number" }).notNull(),
    firstSeen: timestamp("first_seen", { withTimezone: true, precision: 3 }).notNull(),
    lastSeen: timestamp("last_seen", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name] })],
);

/**
 * Per project, event name and key (a column of contract A1 by its name, or `properties.<dotted
 * key>`): the events of that name with the key set, how many of its values are tracked in
 * event_value_catalogue, and whether some were left out (more distinct values than are tracked).
 */
export const eventKeyCatalogue = pgTable(
  "event_key_catalogue",
  {
    projectId: text("project_id").notNull(),
    name: text("name").notNull(),
    key: text("key").notNull(),
    events: bigint("events", { mode: "number" }).notNull(),
    trackedValues: integer("tracked_values").notNull(),
    valuesLeftOut: boolean("values_left_out").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name, t.key] })],
);

/** Per project, event name, key and value text: the events carrying it (exact for a tracked value). */
export const eventValueCatalogue = pgTable(
  "event_value_catalogue",
  {
    projectId: text("project_id").notNull(),
    name: text("name").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    events: bigint("events", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name, t.key, t.value] })],
);
