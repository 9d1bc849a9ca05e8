import { bit, integer, pgTable, primaryKey, smallint, text, unique } from "drizzle-orm/pg-core";
import { unitStart } from "./rollups";

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
