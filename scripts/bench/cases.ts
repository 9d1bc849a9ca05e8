import { BREAKDOWN_DIMENSIONS, type BreakdownDimension } from "../../src/lib/dimensions";

/**
 * What the benchmark measures: every endpoint × window × filter, as an API request and as the
 * plain SQL a user would write over the raw events table without this service.
 */

export const BENCH_PROJECT = "demo";
/** The windows of issue 5, in days, each ending with the data set's last complete UTC day. */
export const WINDOW_DAYS = [1, 7, 30, 90] as const;
export type WindowDays = (typeof WINDOW_DAYS)[number];

export type FilterKind = "none" | "session" | "event";

export interface FilterCase {
  kind: FilterKind;
  label: string;
  column: "country" | "path";
  value: string;
}

export const FILTER_CASES: Record<FilterKind, FilterCase | undefined> = {
  none: undefined,
  // A session attribute: covered by per-session data.
  session: { kind: "session", label: "country is NO", column: "country", value: "NO" },
  // An event field: issue 5's "uncovered" case, answered from raw events.
  event: { kind: "event", label: "path is /pricing", column: "path", value: "/pricing" },
};

export const FILTER_KINDS: readonly FilterKind[] = ["none", "session", "event"];

export const FILTER_TITLES: Record<FilterKind, string> = {
  none: "no filter",
  session: "session-attribute filter (country is NO)",
  event: "event-field filter (path is /pricing, uncovered)",
};

export type EndpointKind = "metrics" | "live" | "pages" | "breakdown" | "charts" | "export";

export interface Endpoint {
  id: string;
  label: string;
  kind: EndpointKind;
  dimension?: BreakdownDimension;
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

function filtersParam(filter: FilterCase | undefined): string | undefined {
  if (!filter) return undefined;
  return JSON.stringify([{ name: filter.column, operator: "is", value: [filter.value] }]);
}

/** The API request (path and query) of one cell. */
export function apiRequest(
  endpoint: Endpoint,
  window: BenchWindow | undefined,
  filter: FilterCase | undefined,
): string {
  const params = new URLSearchParams();
  const filters = filtersParam(filter);
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
      params.set("series", JSON.stringify([{ name: "screen_view" }]));
      params.set("breakdowns", JSON.stringify([{ name: "browser" }]));
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
  if (filters !== undefined) params.set("filters", filters);
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

/**
 * The filter as a user would write it on raw events. A session-scoped endpoint with an event-field
 * filter keeps the sessions that have a matching event; every other case is a plain column test
 * (the seed keeps a session's geo constant, so this equals the session-attribute semantics).
 */
function filterSql(filter: FilterCase | undefined, sessionScoped: boolean): string {
  if (!filter) return "";
  if (filter.kind === "event" && sessionScoped) {
    const matching = `SELECT session_id FROM events WHERE ${WINDOW_WHERE} AND ${filter.column} = $4`;
    return ` AND session_id IN (${matching})`;
  }
  return ` AND ${filter.column} = $4`;
}

/**
 * The plain-SQL baseline of one cell: one straightforward query over `events`, relying only on
 * the (project_id, created_at, id) index, the way an analytics user would write it by hand.
 */
export function baselineQuery(
  endpoint: Endpoint,
  window: BenchWindow,
  filter: FilterCase | undefined,
): SqlQuery {
  const values: unknown[] = [BENCH_PROJECT, window.start, window.end];
  if (filter) values.push(filter.value);
  const where = `${WINDOW_WHERE}${filterSql(filter, isSessionEndpoint(endpoint))}`;
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
    case "charts":
      return {
        text: `SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, browser, count(*) AS count
                 FROM events WHERE ${where} AND name = 'screen_view'
                GROUP BY 1, 2 ORDER BY 1, 2`,
        values,
      };
    case "export":
      return {
        text: `SELECT * FROM events WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 50`,
        values,
      };
  }
}
