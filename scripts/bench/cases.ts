import { BREAKDOWN_DIMENSIONS, type BreakdownDimension } from "../../src/lib/dimensions";

/**
 * What the benchmark measures: every endpoint × window × filter, as an API request and as the
 * plain SQL a user would write over the raw events table without this service.
 */

/** One filter as the API takes it (an element of the `filters` parameter). */
export interface BenchFilter {
  /** A column, or an event property by its key (`properties.plan`). */
  name: BreakdownDimension | "path" | "origin" | "name" | `properties.${string}`;
  operator: "is" | "isNot" | "contains";
  value: string[];
}

export const BENCH_PROJECT = "demo";
/** The windows of issue 5, in days, each ending with the data set's last complete UTC day. */
export const WINDOW_DAYS = [1, 7, 30, 90] as const;
export type WindowDays = (typeof WINDOW_DAYS)[number];

/** The breakdown of every /export/charts measurement. */
export const CHART_BREAKDOWN = "browser";

/**
 * The filters of the core matrix (issue 5): none, a session attribute and an event field (the
 * "uncovered" case of issue 5). Their values are picked from the data (filters.ts): the session
 * one is the `one:country` case of the filtered section (or its first dimension), the event one its
 * `path` case, and their cells are shared with that section.
 */
export type FilterKind = "none" | "session" | "event";

export const FILTER_KINDS: readonly FilterKind[] = ["none", "session", "event"];

export type EndpointKind = "metrics" | "live" | "pages" | "breakdown" | "charts" | "export";
export type ChartSegment = "event" | "user" | "session";

export interface Endpoint {
  id: string;
  label: string;
  kind: EndpointKind;
  dimension?: BreakdownDimension;
  /** /export/charts: what a bucket counts (the core matrix's chart counts events). */
  segment?: ChartSegment;
  /** Has a KV cache to measure hits of. */
  cached: boolean;
  /** Measured per window and filter (`/live` has neither). */
  windowed: boolean;
}

export const DIMENSIONS: readonly BreakdownDimension[] = BREAKDOWN_DIMENSIONS;

export const ENDPOINTS: readonly Endpoint[] = [
  { id: "metrics", label: "/metrics", kind: "metrics", cached: true, windowed: true },
  { id: "live", label: "/live", kind: "live", cached: true, windowed: false },
  { id: "pages", label: "/pages", kind: "pages", cached: true, windowed: true },
  ...DIMENSIONS.map(
    (dimension): Endpoint => ({
      id: `breakdown:${dimension}`,
      label: `/${dimension}`,
      kind: "breakdown",
      dimension,
      cached: true,
      windowed: true,
    }),
  ),
  { id: "charts", label: "/export/charts", kind: "charts", cached: true, windowed: true },
  { id: "export", label: "/export/events", kind: "export", cached: false, windowed: true },
];

/** /export/charts by segment, with a filter and a breakdown: the chart cases of issue 15. */
export const CHART_SEGMENT_ENDPOINTS: readonly Endpoint[] = (["event", "user", "session"] as const).map(
  (segment): Endpoint => ({
    id: `charts:${segment}`,
    label: `/export/charts ${segment}`,
    kind: "charts",
    segment,
    cached: true,
    windowed: true,
  }),
);

/**
 * The id of one measurement, the same in every run and data set: `one:country:/browser:30d`,
 * `none:/live`, `chart:/export/charts:user:30d`. It names the filter by kind (and dimension), never
 * by value, so a run over another data set compares with it case by case (`--compare`).
 */
export const caseId = (filterId: string, endpoint: Endpoint, days: WindowDays | undefined): string => {
  const name = endpoint.segment ? `/export/charts:${endpoint.segment}` : endpoint.label;
  return `${filterId}:${name}${days === undefined ? "" : `:${days}d`}`;
};

/** Session-scoped endpoints: the ones the insights targets of issue 5 speak of. */
export const isSessionEndpoint = (endpoint: Endpoint): boolean =>
  endpoint.kind === "metrics" || endpoint.kind === "pages" || endpoint.kind === "breakdown";

export interface BenchWindow {
  days: WindowDays;
  /** Inclusive UTC dates as the API takes them. */
  startDate: string;
  endDate: string;
  /** The same window, half-open, for SQL. */
  start: Date;
  end: Date;
}

const DAY_MS = 86_400_000;
const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * `days` whole UTC days ending with the last complete day of the data (the day before the one the
 * traffic ends in): the data ends at the moment it was generated, so its own last day can be
 * nearly empty, which would make the 1-day window meaningless.
 */
export function benchWindow(days: WindowDays, dataEnd: Date): BenchWindow {
  const endDay = Date.UTC(dataEnd.getUTCFullYear(), dataEnd.getUTCMonth(), dataEnd.getUTCDate()) - DAY_MS;
  const startDay = endDay - (days - 1) * DAY_MS;
  return {
    days,
    startDate: isoDate(startDay),
    endDate: isoDate(endDay),
    start: new Date(startDay),
    end: new Date(endDay + DAY_MS),
  };
}

/** The series event of a chart cell unless its case names another. */
const CHART_EVENT = "screen_view";

/** The API request (path and query) of one cell; `chartEvent`, a chart's series event. */
export function apiRequest(
  endpoint: Endpoint,
  window: BenchWindow | undefined,
  filters: readonly BenchFilter[] | undefined,
  chartEvent = CHART_EVENT,
): string {
  const params = new URLSearchParams();
  if (endpoint.kind === "live" || !window) return `/insights/${BENCH_PROJECT}/live`;
  let path: string;
  switch (endpoint.kind) {
    case "metrics":
    case "pages":
      path = `/insights/${BENCH_PROJECT}/${endpoint.kind}`;
      params.set("startDate", window.startDate);
      params.set("endDate", window.endDate);
      params.set("timezone", "UTC");
      break;
    case "breakdown":
      path = `/insights/${BENCH_PROJECT}/${endpoint.dimension}`;
      params.set("startDate", window.startDate);
      params.set("endDate", window.endDate);
      params.set("timezone", "UTC");
      break;
    case "charts":
      path = "/export/charts";
      params.set("projectId", BENCH_PROJECT);
      params.set("startDate", window.startDate);
      params.set("endDate", window.endDate);
      params.set("timezone", "UTC");
      params.set("interval", "day");
      params.set("series", JSON.stringify([{ name: chartEvent }]));
      if (endpoint.segment) params.set("segment", endpoint.segment);
      params.set("breakdowns", JSON.stringify([{ name: CHART_BREAKDOWN }]));
      break;
    case "export":
      path = "/export/events";
      params.set("projectId", BENCH_PROJECT);
      params.set("start", window.startDate);
      params.set("end", window.endDate);
      params.set("timezone", "UTC");
      params.set("limit", "50");
      break;
  }
  if (filters?.length) params.set("filters", JSON.stringify(filters));
  return `${path}?${params.toString()}`;
}

export interface SqlQuery {
  text: string;
  values: unknown[];
}

const PREFIXES: Partial<Record<BreakdownDimension, string>> = {
  region: "country",
  city: "country",
  browser_version: "browser",
  os_version: "os",
};

const WINDOW_WHERE = "project_id = $1 AND created_at >= $2 AND created_at < $3";

const EVENT_FIELDS: ReadonlySet<BenchFilter["name"]> = new Set(["path", "origin", "name"]);
const PROPERTY = "properties.";
/** Fields of an event rather than of its session: a session-scoped endpoint keeps the sessions with one. */
const isEventField = (name: BenchFilter["name"]): boolean =>
  EVENT_FIELDS.has(name) || name.startsWith(PROPERTY);

const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (match) => `\\${match}`);

/** One filter as a test of an event row; its value is bound as the next parameter (pushed to `values`). */
function rowTest(filter: BenchFilter, values: unknown[]): string {
  let column: string = filter.name;
  if (filter.name.startsWith(PROPERTY)) {
    // A property as a user reads it from the JSON column: its text, the key path one parameter.
    values.push(filter.name.slice(PROPERTY.length).split("."));
    column = `(properties #>> $${values.length}::text[])`;
  }
  const bound = filter.operator === "contains" ? filter.value.map((v) => `%${escapeLike(v)}%`) : filter.value;
  const one = bound.length === 1;
  values.push(one ? bound[0] : bound);
  const p = `$${values.length}`;
  switch (filter.operator) {
    case "is":
      return one ? `${column} = ${p}` : `${column} = ANY(${p}::text[])`;
    case "isNot":
      return one
        ? `(${column} IS NULL OR ${column} <> ${p})`
        : `(${column} IS NULL OR ${column} <> ALL(${p}::text[]))`;
    case "contains":
      return one ? `${column} LIKE ${p}` : `${column} LIKE ANY(${p}::text[])`;
  }
}

/**
 * The filters as a user would write them on raw events. On a session-scoped endpoint an event-field
 * filter keeps the sessions that have a matching event; every other filter is a plain column test
 * (the seed keeps a session's attributes constant, so this equals the session-attribute semantics).
 */
function filterSql(
  filters: readonly BenchFilter[] | undefined,
  sessionScoped: boolean,
  values: unknown[],
): string {
  let sql = "";
  for (const filter of filters ?? []) {
    const test = rowTest(filter, values);
    sql +=
      isEventField(filter.name) && sessionScoped
        ? ` AND session_id IN (SELECT session_id FROM events WHERE ${WINDOW_WHERE} AND ${test})`
        : ` AND ${test}`;
  }
  return sql;
}

/**
 * The plain-SQL baseline of one cell: one straightforward query over `events`, relying only on
 * the (project_id, created_at, id) index, the way an analytics user would write it by hand.
 */
export function baselineQuery(
  endpoint: Endpoint,
  window: BenchWindow,
  filters: readonly BenchFilter[] | undefined,
  chartEvent = CHART_EVENT,
): SqlQuery {
  const values: unknown[] = [BENCH_PROJECT, window.start, window.end];
  const where = `${WINDOW_WHERE}${filterSql(filters, isSessionEndpoint(endpoint), values)}`;
  switch (endpoint.kind) {
    case "live":
      return {
        text: `SELECT count(DISTINCT profile_id) AS visitors FROM events
                WHERE project_id = $1 AND created_at >= now() - interval '5 minutes'`,
        values: [BENCH_PROJECT],
      };
    case "metrics": {
      const unit = window.days === 1 ? "hour" : "day";
      return {
        text: `WITH s AS (
                 SELECT session_id, min(created_at) AS first_at, max(created_at) AS last_at,
                        (array_agg(profile_id ORDER BY created_at))[1] AS visitor,
                        count(*) FILTER (WHERE name = 'screen_view') AS views, sum(revenue) AS revenue
                   FROM events WHERE ${where} GROUP BY session_id)
               SELECT date_trunc('${unit}', first_at AT TIME ZONE 'UTC') AS bucket, count(*) AS sessions,
                      count(DISTINCT visitor) AS visitors,
                      round(100.0 * count(*) FILTER (WHERE views <= 1) / NULLIF(count(*), 0), 2)
                        AS bounce_rate,
                      avg(extract(epoch FROM last_at - first_at)) FILTER (WHERE last_at > first_at)
                        AS duration,
                      sum(views) AS screen_views, sum(revenue) AS revenue
                 FROM s GROUP BY ROLLUP (1) ORDER BY 1 NULLS FIRST`,
        values,
      };
    }
    case "pages":
      return {
        text: `WITH s AS (
                 SELECT session_id, count(*) FILTER (WHERE name = 'screen_view') AS views
                   FROM events WHERE ${where} GROUP BY session_id)
               SELECT e.origin, e.path, max(e.title) AS title, count(DISTINCT e.session_id) AS sessions,
                      count(*) AS pageviews,
                      round(100.0 * count(DISTINCT e.session_id) FILTER (WHERE s.views <= 1)
                            / NULLIF(count(DISTINCT e.session_id), 0), 2) AS bounce_rate,
                      avg(e.duration) FILTER (WHERE e.duration > 0) / 1000.0 AS avg_duration
                 FROM events e JOIN s USING (session_id)
                WHERE e.project_id = $1 AND e.created_at >= $2 AND e.created_at < $3
                  AND e.name = 'screen_view'
                GROUP BY e.origin, e.path ORDER BY sessions DESC, e.path, e.origin LIMIT 10`,
        values,
      };
    case "breakdown": {
      const column = endpoint.dimension ?? "country";
      const prefix = PREFIXES[column];
      const prefixSelect = prefix ? `, (array_agg(${prefix} ORDER BY created_at))[1] AS prefix` : "";
      const prefixGroup = prefix ? ", prefix" : "";
      return {
        text: `WITH s AS (
                 SELECT session_id, (array_agg(${column} ORDER BY created_at))[1] AS value${prefixSelect},
                        count(*) FILTER (WHERE name = 'screen_view') AS views,
                        extract(epoch FROM max(created_at) - min(created_at)) AS duration
                   FROM events WHERE ${where} GROUP BY session_id)
               SELECT value${prefixGroup}, count(*) AS sessions, sum(views) AS pageviews,
                      round(100.0 * count(*) FILTER (WHERE views <= 1) / NULLIF(count(*), 0), 2)
                        AS bounce_rate,
                      avg(duration) FILTER (WHERE duration > 0) AS avg_session_duration
                 FROM s GROUP BY value${prefixGroup} ORDER BY sessions DESC, value${prefixGroup} LIMIT 10`,
        values,
      };
    }
    case "charts": {
      const count =
        endpoint.segment === "user"
          ? "count(DISTINCT profile_id)"
          : endpoint.segment === "session"
            ? "count(DISTINCT session_id)"
            : "count(*)";
      return {
        text: `SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, ${CHART_BREAKDOWN},
                      ${count} AS count
                 FROM events WHERE ${where} AND name = $${values.length + 1}
                GROUP BY 1, 2 ORDER BY 1, 2`,
        values: [...values, chartEvent],
      };
    }
    case "export":
      return {
        text: `SELECT * FROM events WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 50`,
        values,
      };
  }
}
