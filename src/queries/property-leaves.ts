import type { Filter, FilterOperator } from "../lib/filter-parser";

/**
 * How a property filter on sessions (contract section 3) is answered: from the session properties
 * (`session_properties`: the leaves of each session's events' properties,
 * src/db/routines/property_leaves.sql) or from the events' JSON. A session passes a positive
 * operator when one of its events' `properties #>> path` passes it, and `#>>` prints at a path
 * either a leaf the rows hold as text, or what a row with a NULL value marks (an object or an array
 * as JSON, a text over the value limit). So:
 * - `values`: `is` over values no marked text can equal (none starts like an object or an array,
 *   none is over the limit): the rows holding those values, by the value index;
 * - `rows`: any other positive operator (`contains`, `startsWith`, `regex`, `gt`, …, and `is` over
 *   such values): the path's rows whose value passes, and, for the sessions a NULL row marks, their
 *   events;
 * - `complement`: the negative operators (`isNot`, `doesNotContain`, `isNull`), which keep sessions
 *   with an event that passes them. A session fails one only when every one of its events passes
 *   its positive counterpart (`is`, `contains`, `isNotNull`), so it holds a row that passes the
 *   counterpart or a NULL row: the events of those sessions only are read, and the sessions where
 *   none passes are left out;
 * - `events`: paths the rows write otherwise: array positions written another way ("01", "-1",
 *   "+2" or " 3" reach an element the rows name otherwise), or past the limits under which a path
 *   is kept.
 */
export type PropertyAnswer = "values" | "rows" | "complement" | "events";

/** The limits property_leaves applies (keep the two equal). */
export const LEAF_MAX_KEYS = 16;
export const LEAF_PATH_MAX_BYTES = 256;
export const LEAF_VALUE_MAX_BYTES = 256;

/** Operators that keep a session when one of its events passes, and never pass a missing value. */
const POSITIVE: ReadonlySet<FilterOperator> = new Set([
  "is",
  "contains",
  "startsWith",
  "endsWith",
  "regex",
  "isNotNull",
  "gt",
  "gte",
  "lt",
  "lte",
]);

/** The negative operators, each with the positive operator that keeps what it leaves out. */
export const POSITIVE_COUNTERPART: Partial<Record<FilterOperator, FilterOperator>> = {
  isNot: "is",
  doesNotContain: "contains",
  isNull: "isNotNull",
};

/** What strtol(…, 10) takes whole, so `#>>` reads it as an array position. */
const POSITION_LIKE = /^[ \t\n\v\f\r]*[+-]?[0-9]+$/;
/** A position as property_leaves writes it. */
const POSITION = /^(0|[1-9][0-9]*)$/;

const utf8 = new TextEncoder();
const bytes = (text: string): number => utf8.encode(text).length;

/** Whether the rows name the path as `#>>` reads it, within the limits under which they keep it. */
function pathKept(path: readonly string[]): boolean {
  if (path.length === 0 || path.length > LEAF_MAX_KEYS) return false;
  if (path.some((key) => POSITION_LIKE.test(key) && !POSITION.test(key))) return false;
  return path.reduce((total, key) => total + bytes(key), 0) <= LEAF_PATH_MAX_BYTES;
}

/** Whether a value is a text the rows hold, which no marked text can equal. */
const heldText = (value: string): boolean =>
  !value.startsWith("{") && !value.startsWith("[") && bytes(value) <= LEAF_VALUE_MAX_BYTES;

export function propertyAnswer(
  operator: FilterOperator,
  path: readonly string[],
  values: readonly string[],
): PropertyAnswer {
  if (!pathKept(path)) return "events";
  if (POSITIVE_COUNTERPART[operator] !== undefined) return "complement";
  if (!POSITIVE.has(operator)) return "events";
  return operator === "is" && values.length > 0 && values.every(heldText) ? "values" : "rows";
}

/**
 * How the property strings per day (src/db/routines/refresh_session_bits.sql, refresh_event_bits.sql)
 * answer a filter: `values` (`is` over values the rows hold as they are), `rows` (another positive
 * operator, which may also match the JSON text of an object, an array or a long text, so only where
 * nothing holds one at the path), or not at all (a negative operator, a path the rows do not keep).
 */
export function propertyStringsAnswer(filter: Filter): "values" | "rows" | undefined {
  if (filter.field.kind !== "property") return undefined;
  const answer = propertyAnswer(filter.operator, filter.field.path, filter.values.map(String));
  return answer === "values" || answer === "rows" ? answer : undefined;
}
