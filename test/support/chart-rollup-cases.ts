import { type Filter, resolveFilterField } from "../../src/lib/filter-parser";
import type { ChartSegment, ChartSeriesQuery } from "../../src/queries/charts/model";

// The chart rollup tests' cases and bucket shapes (test/node/chart-rollups.test.ts): each case a
// segment, event, breakdown and filters, each shape a window and bucket step, and what a case reads.

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const FROM = Date.UTC(2026, 6, 1);
export const TO = Date.UTC(2026, 6, 8);

function steps(start: number, end: number, step: number): number[] {
  const buckets: number[] = [];
  for (let t = start; t < end; t += step) buckets.push(t);
  return buckets;
}

/** A filter or breakdown field by its API name. */
export function chartField(name: string) {
  const resolved = resolveFilterField(name);
  if (!resolved) throw new Error(`no field ${name}`);
  return resolved;
}

/** A chart's window of `step` buckets, and with `previous` the window of as many before it. */
export function chartWindows(
  start: number,
  end: number,
  step: number,
  previous: boolean,
): Pick<ChartSeriesQuery, "current" | "previous"> {
  return {
    current: { window: { start, end }, buckets: steps(start, end, step) },
    previous: previous
      ? {
          window: { start: start - (end - start), end: start },
          buckets: steps(start - (end - start), start, step),
        }
      : undefined,
  };
}

interface Case {
  segment: ChartSegment;
  property?: string;
  event: string;
  breakdown?: string;
  /** One filter: field, values and operator (`is` unless given). */
  filter?: [string, string[], Filter["operator"]?];
  /** A second filter, ANDed. */
  and?: [string, string[], Filter["operator"]?];
}

export const CASES: Case[] = [
  { segment: "event", event: "*" },
  { segment: "event", event: "screen_view", breakdown: "browser" },
  { segment: "event", event: "*", breakdown: "name" },
  { segment: "event", event: "*", breakdown: "path" },
  { segment: "event", event: "screen_view", breakdown: "referrer_name" },
  { segment: "property_sum", property: "duration", event: "screen_view", breakdown: "country" },
  { segment: "property_average", property: "duration", event: "*", breakdown: "os" },
  { segment: "property_min", property: "revenue", event: "*", breakdown: "utm_campaign" },
  { segment: "property_max", property: "revenue", event: "*" },
  { segment: "property_sum", property: "revenue", event: "*", breakdown: "device" },
  { segment: "event", event: "*", breakdown: "utm_source" },
  { segment: "event", event: "screen_view", filter: ["browser", ["Chrome"]] },
  { segment: "property_sum", property: "duration", event: "*", filter: ["path", ["/pricing", "/100%_off"]] },
  { segment: "event", event: "*", filter: ["name", ["screen_view", "purchase"]] },
  { segment: "property_max", property: "revenue", event: "*", filter: ["country", ["NO"]] },
  { segment: "event", event: "*", filter: ["browser", ["Chrome"], "isNot"] },
  { segment: "event", event: "screen_view", filter: ["path", ["/docs", "/pricing"], "startsWith"] },
  {
    segment: "property_sum",
    property: "duration",
    event: "*",
    filter: ["referrer_name", ["oo"], "contains"],
  },
  { segment: "event", event: "*", filter: ["utm_source", [], "isNull"] },
  {
    segment: "property_average",
    property: "duration",
    event: "*",
    filter: ["utm_campaign", [], "isNotNull"],
  },
  { segment: "event", event: "*", filter: ["os", ["OS", "Linux"], "doesNotContain"] },
  { segment: "event", event: "*", filter: ["name", ["_view", "click"], "endsWith"] },
  // A filter with a breakdown of its own column: the rows of that dimension answer both.
  { segment: "event", event: "*", breakdown: "browser", filter: ["browser", ["Chrome"], "isNot"] },
  {
    segment: "property_sum",
    property: "revenue",
    event: "*",
    breakdown: "country",
    filter: ["country", ["N"], "startsWith"],
  },
  // A filter with a breakdown of another column: the rows of that pair, the filter on either side.
  { segment: "event", event: "screen_view", breakdown: "browser", filter: ["country", ["NO"]] },
  { segment: "event", event: "*", breakdown: "country", filter: ["browser", ["Chrome"], "isNot"] },
  {
    segment: "property_sum",
    property: "revenue",
    event: "*",
    breakdown: "utm_campaign",
    filter: ["os", ["OS", "Linux"], "contains"],
  },
  {
    segment: "property_min",
    property: "duration",
    event: "*",
    breakdown: "referrer_type",
    filter: ["referrer_name", ["oo"], "contains"],
  },
  { segment: "event", event: "*", breakdown: "device", filter: ["utm_source", [], "isNull"] },
  // Two filters of a pair, with or without a breakdown of one of them.
  {
    segment: "event",
    event: "*",
    filter: ["country", ["N"], "startsWith"],
    and: ["device", ["desktop"], "isNot"],
  },
  {
    segment: "property_average",
    property: "duration",
    event: "screen_view",
    breakdown: "os",
    filter: ["os", ["Windows", "macOS"]],
    and: ["utm_medium", [], "isNotNull"],
  },
  // `name` is in every row: with one column's rows, and with a pair's.
  { segment: "event", event: "*", breakdown: "name", filter: ["device", ["mobile"]] },
  { segment: "event", event: "*", breakdown: "os", filter: ["name", ["screen_view", "purchase"]] },
  {
    segment: "property_max",
    property: "revenue",
    event: "*",
    breakdown: "browser",
    filter: ["name", ["purchase"]],
    and: ["country", ["NO", "SE"], "isNot"],
  },
  // Distinct visitors and sessions from the day rows, where each group is one row a day: the name
  // and every column pinned by the series' event, the breakdown or an `is` of one value.
  { segment: "user", event: "screen_view", breakdown: "browser", filter: ["country", ["NO"]] },
  { segment: "session", event: "screen_view", breakdown: "browser", filter: ["country", ["NO"]] },
  { segment: "user", event: "*", breakdown: "name" },
  { segment: "session", event: "purchase" },
  { segment: "user", event: "screen_view", breakdown: "os" },
  { segment: "session", event: "*", breakdown: "utm_source", filter: ["name", ["signup"]] },
  { segment: "user", event: "screen_view", breakdown: "device", filter: ["device", ["mobile"], "isNot"] },
  {
    segment: "session",
    event: "*",
    breakdown: "referrer_name",
    filter: ["utm_source", ["google"]],
    and: ["name", ["screen_view"]],
  },
  { segment: "user", event: "purchase", filter: ["browser", ["Chrome"]], and: ["os", ["Android"]] },
  // A path breakdown or filter: the day rows have no path, the exact path answers.
  { segment: "user", event: "screen_view", breakdown: "path" },
  { segment: "user", event: "screen_view", filter: ["path", ["/pricing"]] },
  { segment: "session", event: "*", filter: ["path", ["/pricing"]], and: ["name", ["screen_view"]] },
  // Groups of several rows a day: distinct counts do not add up, the exact path answers.
  { segment: "user", event: "*", breakdown: "browser" },
  { segment: "session", event: "screen_view", breakdown: "browser", filter: ["country", ["NO", "SE"]] },
  { segment: "user", event: "screen_view", filter: ["country", ["N"], "startsWith"] },
  { segment: "session", event: "screen_view", breakdown: "os", filter: ["utm_source", [], "isNull"] },
];

export const SHAPES: Array<[string, number, number, number, boolean]> = [
  ["three days by day, with the three before", FROM + 4 * DAY, TO, DAY, true],
  ["the week by day", FROM, TO, DAY, false],
  ["six days by two days", FROM, FROM + 6 * DAY, 2 * DAY, false],
  ["one day by hour, with the previous day", FROM + 3 * DAY, FROM + 4 * DAY, HOUR, true],
  ["odd hours, 5-hour buckets", FROM + 7 * HOUR, FROM + 92 * HOUR, 5 * HOUR, false],
];

export function chartQuery(projectId: string, item: Case, shape: (typeof SHAPES)[number], rollups: boolean) {
  const [, start, end, step, previous] = shape;
  const query: ChartSeriesQuery = {
    projectId,
    event: item.event,
    segment: item.segment,
    property: item.property === undefined ? undefined : chartField(item.property),
    filters: [item.filter, item.and].flatMap((filter, index) =>
      filter ? [{ field: chartField(filter[0]), operator: filter[2] ?? "is", values: filter[1], index }] : [],
    ),
    breakdowns: item.breakdown === undefined ? [] : [chartField(item.breakdown)],
    limit: 50,
    ...chartWindows(start, end, step, previous),
    rollups,
  };
  return query;
}

/** The columns of a case besides `name`. */
export const caseColumns = (item: Case) =>
  new Set(
    [item.breakdown, item.filter?.[0], item.and?.[0]].filter(
      (name): name is string => name !== undefined && name !== "name",
    ),
  );

/** Whether a case reads the rows of a pair of columns (two columns besides `name`). */
export const isPairCase = (item: Case): boolean => caseColumns(item).size === 2;

export const isDistinctCase = (item: Case): boolean => item.segment === "user" || item.segment === "session";

/**
 * Whether each group of a distinct case is one day row: the name and every column are the
 * breakdown, or have an `is` filter of one value (the name also: the series' event).
 */
export function pinsEveryGroup(item: Case): boolean {
  const pinned = (name: string) =>
    item.breakdown === name ||
    (name === "name" && item.event !== "*") ||
    [item.filter, item.and].some(
      (filter) => filter?.[0] === name && (filter[2] ?? "is") === "is" && filter[1].length === 1,
    );
  return pinned("name") && [...caseColumns(item)].every(pinned);
}
