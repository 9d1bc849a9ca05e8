import * as v from "valibot";
import type { RawFilter } from "../../lib/filter-parser";

/**
 * The listings' exact-match parameters (contract A3): `country=NO` and the like, each matching one
 * column exactly, as an `is` filter on it would. `columns` maps each parameter to its column.
 */

const exactColumn = (column: string, of: string) =>
  v.optional(v.pipe(v.string(), v.description(`Only ${of} whose \`${column}\` is exactly this.`)));

/** One optional text parameter per column parameter, typed by its name. */
export function exactColumnParams<T extends Record<string, string>>(
  columns: T,
  of: string,
): { [K in keyof T]: ReturnType<typeof exactColumn> } {
  const entries = Object.entries(columns).map(([param, column]) => [param, exactColumn(column, of)]);
  return Object.fromEntries(entries) as { [K in keyof T]: ReturnType<typeof exactColumn> };
}

/** The given column parameters as `is` filters. */
export function exactColumnFilters<T extends Record<string, string>>(
  columns: T,
  query: Partial<Record<keyof T, string>>,
): RawFilter[] {
  return Object.entries(columns).flatMap(([param, column]) => {
    const value = query[param as keyof T];
    return value === undefined ? [] : [{ name: column, operator: "is" as const, value: [value] }];
  });
}

/** The parameters of a session's attributes (its first event's) and its visitor, shared by the listings. */
export const ATTRIBUTE_PARAMS = {
  country: "country",
  city: "city",
  device: "device",
  browser: "browser",
  os: "os",
  referrer: "referrer",
  referrerName: "referrer_name",
  referrerType: "referrer_type",
  profileId: "profile_id",
} as const;
