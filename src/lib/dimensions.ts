/**
 * The dimensions the derived tables are built per, by their wire (and SQL column) names. The SQL
 * routines that build those tables spell the same lists (src/db/routines/refresh_rollups.sql and
 * refresh_event_rollups.sql); test/node/routines.test.ts holds them equal.
 */

/** Session attributes the insights break down by (contract section 4), in the order of the rollups. */
export const BREAKDOWN_DIMENSIONS = [
  "referrer",
  "referrer_name",
  "referrer_type",
  "country",
  "region",
  "city",
  "device",
  "brand",
  "model",
  "browser",
  "browser_version",
  "os",
  "os_version",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "utm_term",
  "utm_content",
] as const;

export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number];

/** The attribute that qualifies a dimension's values where a value alone is ambiguous (`prefix`). */
export const DIMENSION_PREFIXES: Readonly<Partial<Record<BreakdownDimension, BreakdownDimension>>> = {
  region: "country",
  city: "country",
  browser_version: "browser",
  os_version: "os",
};

/**
 * Dimensions a session has several values of: each path its events carry and each event name it
 * holds. The derived rows count a session under every value, once each, so the rows of one value
 * answer "sessions with an event on path …" or "… named …" (src/db/routines/session_values_join.sql).
 */
export const MULTI_VALUED_DIMENSIONS = ["path", "name"] as const;

export type MultiValuedDimension = (typeof MULTI_VALUED_DIMENSIONS)[number];

export const isMultiValuedDimension = (name: string): name is MultiValuedDimension =>
  (MULTI_VALUED_DIMENSIONS as readonly string[]).includes(name);

/** A dimension the derived rows per value are kept for: a breakdown's, or a multi-valued one. */
export type FilterDimension = BreakdownDimension | MultiValuedDimension;

/**
 * The values a session's events' properties hold at one path (session_properties), multi-valued
 * like `path` and kept only in the bit strings per day, for the paths a day has few values of
 * (src/db/routines/refresh_session_bits.sql): `property:` and the path as a JSON array, as
 * property_dimension (src/db/routines/property_dimension.sql) names it in the refresh.
 */
export type PropertyStringDimension = `property:${string}`;

export const propertyStringDimension = (path: readonly string[]): PropertyStringDimension =>
  `property:${JSON.stringify(path)}`;

/**
 * Each origin a session's events carry: multi-valued like `path`, but kept only in the bit strings
 * per day (src/db/routines/refresh_session_bits.sql), not in the rollups; and property values.
 */
export type BitStringDimension = FilterDimension | "origin" | PropertyStringDimension;

export const isBitStringOnlyDimension = (name: string): name is "origin" => name === "origin";

export const isBreakdownDimension = (name: string): name is BreakdownDimension =>
  (BREAKDOWN_DIMENSIONS as readonly string[]).includes(name);

/**
 * The event columns the chart rollups carry a row per value of (besides `name`, which every row
 * has): the ones charts are usually split by. Each costs a hash aggregate over every event when the
 * rollups are built, so the long tail (cities, versions, full referrers, properties) is counted
 * from the events.
 */
export const CHART_ROLLUP_COLUMNS = [
  "path",
  "country",
  "device",
  "browser",
  "os",
  "referrer_name",
  "referrer_type",
  "utm_source",
  "utm_medium",
  "utm_campaign",
] as const;

export type ChartRollupColumn = (typeof CHART_ROLLUP_COLUMNS)[number];

/**
 * The chart rollup columns whose pairs have rows of their own (event_pair_rollups), so a chart
 * filtered on one and split by another is read from rows: all of them but `path`, whose values are
 * many (a row per page and value of the other column would be about as many as its events).
 * refresh_event_pair_rollups.sql spells the same list; test/node/routines.test.ts holds them equal.
 */
export const CHART_PAIR_COLUMNS = CHART_ROLLUP_COLUMNS.filter(
  (column): column is Exclude<ChartRollupColumn, "path"> => column !== "path",
);

/**
 * The top-level event columns of the analyses contract (A1), in its order: what discovery lists as
 * `columns` and what a `propertyKey` names before the properties. The catalogue routine
 * (src/db/routines/refresh_catalogue.sql) spells the same list; test/node/routines.test.ts holds
 * them equal.
 */
export const EVENT_COLUMNS = [
  "path",
  "origin",
  ...BREAKDOWN_DIMENSIONS,
  "profile_id",
  "device_id",
  "session_id",
  "duration",
  "revenue",
] as const;
