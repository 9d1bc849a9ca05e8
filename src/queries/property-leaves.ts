/**
 * Whether a property filter `is` (contract section 3) can be answered from the session
 * properties (`session_properties`: the leaves of each session's events' properties,
 * src/db/routines/property_leaves.sql) instead of the events' JSON. An event passes
 * `properties #>> path = value` exactly when the leaf (path, value) is among its leaves, as long as:
 * - every key of the path that `#>>` could read as an array position is written as the leaves
 *   write positions ("0", "12"): "01", "-1", "+2" or " 3" reach an element the leaves name otherwise;
 * - no value starts like an object or an array, which `#>>` prints and the leaves leave out;
 * - the path and the values are within the limits under which property_leaves keeps a leaf.
 * Elsewhere the filter reads the events, as before.
 */

/** The limits property_leaves applies (keep the two equal). */
export const LEAF_MAX_KEYS = 16;
export const LEAF_PATH_MAX_BYTES = 256;
export const LEAF_VALUE_MAX_BYTES = 256;

/** What strtol(…, 10) takes whole, so `#>>` reads it as an array position. */
const POSITION_LIKE = /^[ \t\n\v\f\r]*[+-]?[0-9]+$/;
/** A position as property_leaves writes it. */
const POSITION = /^(0|[1-9][0-9]*)$/;

const utf8 = new TextEncoder();
const bytes = (text: string): number => utf8.encode(text).length;

export function answeredByLeaves(path: readonly string[], values: readonly string[]): boolean {
  if (path.length === 0 || path.length > LEAF_MAX_KEYS || values.length === 0) return false;
  if (path.some((key) => POSITION_LIKE.test(key) && !POSITION.test(key))) return false;
  if (path.reduce((total, key) => total + bytes(key), 0) > LEAF_PATH_MAX_BYTES) return false;
  return values.every(
    (value) => !value.startsWith("{") && !value.startsWith("[") && bytes(value) <= LEAF_VALUE_MAX_BYTES,
  );
}
