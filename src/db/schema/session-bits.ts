import { customType, index, pgTable, primaryKey, smallint, text } from "drizzle-orm/pg-core";
import { unitStart } from "./rollups";

/**
 * A `bit varying` column. Drizzle's `bit` has a fixed length; these strings are as long as their
 * day has sessions.
 */
const bitVarying = customType<{ data: string }>({ dataType: () => "bit varying" });

// ---------------------------------------------------------------------------------------------
// Bit strings per project day over the day's sessions, built by refresh_session_bits
// (src/db/routines/refresh_session_bits.sql). A day's sessions are numbered 0… in start order
// (their day ordinal); every string of a day has one bit per session (rounded up to whole bytes),
// so the strings of a day combine with `&` and `|` and count with `bit_count`. They answer two or
// three filters at once (docs/design/filtered-dashboards.md): the AND of the filters' strings is
// the day's matching sessions, and the bit slices below turn it into sums.

/**
 * Per (project day, breakdown dimension, value): the day's sessions with that value (`name` null =
 * not set, "" included; `prefix` as in the rollups).
 */
export const sessionDayBits = pgTable(
  "session_day_bits",
  {
    projectId: text("project_id").notNull(),
    day: unitStart("day"),
    dimension: text("dimension").notNull(),
    name: text("name"),
    prefix: text("prefix"),
    sessions: bitVarying("sessions").notNull(),
  },
  (t) => [
    // Reads by (project, dimension, values, days), like the rollups.
    index("session_day_bits_read_idx").on(t.projectId, t.dimension, t.name, t.day),
    // A refresh deletes a touched day's strings.
    index("session_day_bits_day_idx").on(t.projectId, t.day),
  ],
);

/**
 * Per (project day, measure, slice): bit `slice` of each session's measure, so that the sum of a
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
    measure: text("measure").notNull(),
    slice: smallint("slice").notNull(),
    sessions: bitVarying("sessions").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.measure, t.slice] })],
);
