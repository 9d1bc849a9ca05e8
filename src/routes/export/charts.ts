import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { ApiError } from "../../lib/errors";
import {
  type FilterField,
  FilterList,
  FiltersParam,
  normalizeFilters,
  type RawFilter,
  resolveFilterField,
} from "../../lib/filters";
import { INTERVALS, RANGE_PRESETS, resolveRange } from "../../lib/range";
import { formatInstant } from "../../lib/timezone";
import { jsonQueryParam } from "../../lib/validation";
import { cacheKey, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { chartSeries, compareDecimals, decimalMean, decimalSum, percentChange } from "../../queries/charts";
import {
  CHART_SEGMENTS,
  type ChartGroup,
  type ChartSegment,
  type ChartSeriesResult,
  isPropertySegment,
  MAX_CHART_BREAKDOWNS,
} from "../../queries/charts-model";
import { assertValidRegexes } from "../../queries/filters";
import { freshnessFor, RangeParams, rollupsAllowed } from "../insights/params";
import { jsonContent, PROJECT_ROUTE_PROBLEMS, problemResponses } from "../openapi";

const MAX_SERIES = 10;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
/** The label of a breakdown value that is not set, in `names` (the `breakdowns` object keeps null). */
const NOT_SET_LABEL = "(not set)";

const segmentList = CHART_SEGMENTS.join(", ");

const Segment = v.picklist(CHART_SEGMENTS, (issue) =>
  issue.input === undefined
    ? `segment must be one of ${segmentList}`
    : `unknown segment ${JSON.stringify(issue.input)}; use one of ${segmentList}`,
);

/** A field a property segment can aggregate: `duration`, `revenue` or `properties.<key>`. */
function numericField(name: string): FilterField | undefined {
  const field = resolveFilterField(name);
  if (field?.kind === "property" || (field?.kind === "column" && field.numeric)) return field;
  return undefined;
}

const PropertyName = v.pipe(
  v.string("property must be a string"),
  v.check(
    (name) => numericField(name) !== undefined,
    (issue) =>
      `property ${JSON.stringify(issue.input)} cannot be aggregated; use duration, revenue or properties.<key>`,
  ),
);

const SeriesItem = v.object(
  {
    name: v.pipe(
      v.string("name must be an event name, or * for every event"),
      v.minLength(1, "name must be an event name, or * for every event"),
      v.maxLength(200, "name is at most 200 characters"),
    ),
    filters: v.optional(FilterList),
    segment: v.optional(Segment),
    property: v.optional(PropertyName),
  },
  "each series must be an object {name, filters?, segment?, property?}",
);

const SeriesList = v.pipe(
  v.array(SeriesItem, "series must be a JSON array of {name, filters?, segment?, property?} objects"),
  v.minLength(1, "series needs at least one item"),
  v.maxLength(MAX_SERIES, `at most ${MAX_SERIES} series`),
);

type RawSeries = v.InferOutput<typeof SeriesItem>;

const BreakdownItem = v.object(
  {
    name: v.pipe(
      v.string("name must be a string"),
      v.check(
        (name) => resolveFilterField(name) !== undefined,
        (issue) =>
          `unknown breakdown ${JSON.stringify(issue.input)}; use a filter name such as browser, country, path or properties.<key>`,
      ),
    ),
  },
  "each breakdown must be an object {name}",
);

/** Two spellings of one field (`referrerName`, `referrer_name`) are one breakdown. */
const fieldKey = (name: string) => JSON.stringify(resolveFilterField(name) ?? name);

const BreakdownList = v.pipe(
  v.array(BreakdownItem, "breakdowns must be a JSON array of {name} objects"),
  v.maxLength(MAX_CHART_BREAKDOWNS, `at most ${MAX_CHART_BREAKDOWNS} breakdowns`),
  v.check(
    (list) => new Set(list.map((item) => fieldKey(item.name))).size === list.length,
    "breakdowns must name different fields",
  ),
);

const SERIES_DESCRIPTION = `URL-encoded JSON array of 1–${MAX_SERIES} series, each
\`{"name": …, "filters"?: […], "segment"?: …, "property"?: …}\`: \`name\` is an event name, or \`*\` for every
event; \`filters\` has the shape of the \`filters\` parameter and applies to this series only (error paths
read \`series/0/filters/1/operator\`); \`segment\` and \`property\` override the top-level ones.
Other keys of a series are ignored. Required (or its alias \`events\`).`;

const SEGMENT_DESCRIPTION = `What each bucket counts, for series without their own \`segment\` (default \`event\`):
\`event\` matching events; \`user\` distinct visitors (\`profile_id\`); \`session\` distinct sessions;
\`user_average\` events ÷ distinct visitors (2 decimals); \`one_event_per_user\` each visitor once, in the
bucket (and breakdown group) of its latest matching event in the period;
\`property_sum\`, \`property_average\` (2 decimals), \`property_min\`, \`property_max\` of \`property\` over the
matching events whose value is numeric (others are skipped). An empty bucket is 0 for every segment,
\`property_min\` and \`property_max\` included.`;

const BREAKDOWNS_DESCRIPTION = `URL-encoded JSON array of at most ${MAX_CHART_BREAKDOWNS} \`{"name": …}\`,
names as for \`filters\` (\`browser\`, \`country\`, \`properties.plan\`…). Each series splits into one series per
combination of values. Charts count events, so every name reads the event's own column, session
attributes (referrer, UTM, geo, device) included. Empty and missing values are one group, null in
\`event.breakdowns\` and \`${NOT_SET_LABEL}\` in \`names\`.`;

const CHART_FILTERS_DESCRIPTION = `URL-encoded JSON array of filters for every series, ANDed with each series' own
\`filters\`; same objects, names and operators as on the insights endpoints. Charts count events, so every
filter tests the event itself: session attributes (referrer, UTM, geo, device) read the event's own
columns.`;

const ChartsQuery = v.object({
  projectId: v.optional(
    v.pipe(
      v.string(),
      v.description("The project; a read client may omit it (its own project), a root client must give it."),
    ),
  ),
  project_id: v.optional(v.pipe(v.string(), v.description("Alias of `projectId`."))),
  series: v.optional(
    jsonQueryParam({
      param: "series",
      schema: SeriesList,
      expected: "a JSON array of {name, filters?, segment?, property?} objects",
      description: SERIES_DESCRIPTION,
      example:
        '[{"name":"screen_view","segment":"user"},{"name":"purchase","segment":"property_sum","property":"revenue"}]',
    }),
  ),
  events: v.optional(
    jsonQueryParam({
      param: "events",
      schema: SeriesList,
      expected: "a JSON array of {name, filters?, segment?, property?} objects",
      description: "Alias of `series` (OpenPanel's name); give one of the two.",
      example: '[{"name":"screen_view"}]',
    }),
  ),
  segment: v.optional(v.pipe(Segment, v.description(SEGMENT_DESCRIPTION)), "event"),
  property: v.optional(
    v.pipe(
      PropertyName,
      v.description(
        "Numeric field of the property segments, for series without their own `property`: `duration` (ms), `revenue` (cents) or `properties.<key>`.",
      ),
    ),
  ),
  breakdowns: v.optional(
    jsonQueryParam({
      param: "breakdowns",
      schema: BreakdownList,
      expected: "a JSON array of {name} objects",
      description: BREAKDOWNS_DESCRIPTION,
      example: '[{"name":"browser"},{"name":"country"}]',
    }),
  ),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `limit must be a whole number from 1 to ${MAX_LIMIT}`),
      v.toNumber(),
      v.minValue(1, `limit must be from 1 to ${MAX_LIMIT}`),
      v.maxValue(MAX_LIMIT, `limit must be from 1 to ${MAX_LIMIT}`),
      v.description(
        `Breakdown series kept per series, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT}), largest \`sum\` first; \`meta.truncated\` says when some were cut. Larger values are refused, never clamped.`,
      ),
    ),
    String(DEFAULT_LIMIT),
  ),
  interval: v.optional(
    v.pipe(
      v.picklist(INTERVALS, `interval must be one of ${INTERVALS.join(", ")}`),
      v.description("Bucket size (default `day`); weeks start on Monday. More than 2000 buckets is a 400."),
    ),
    "day",
  ),
  range: v.optional(
    v.pipe(
      v.picklist(RANGE_PRESETS, `range must be one of ${RANGE_PRESETS.join(", ")}`),
      v.description("Preset window in `timezone` (default `30d`). `startDate` + `endDate` win over it."),
    ),
  ),
  startDate: RangeParams.startDate,
  endDate: RangeParams.endDate,
  timezone: RangeParams.timezone,
  filters: v.optional(v.pipe(FiltersParam.wrapped, v.description(CHART_FILTERS_DESCRIPTION)), "[]"),
  previous: v.optional(
    v.pipe(
      v.picklist(["true", "false"], "previous must be true or false"),
      v.description(
        "Adds `previous` to every data point and to `metrics`: the period ending where this one starts, as many local days long for whole-day windows (else as long), its buckets paired by position.",
      ),
    ),
    "false",
  ),
});

type ChartsInput = v.InferOutput<typeof ChartsQuery>;

const ComparisonSchema = v.object({
  value: v.pipe(v.number(), v.description("The previous period's value.")),
  change: v.pipe(
    v.nullable(v.number()),
    v.description("Signed percent change relative to |previous value|, 1 decimal; null when it is 0."),
  ),
  state: v.pipe(
    v.picklist(["positive", "negative", "neutral"]),
    v.description("Whether the current value is above, below or equal to the previous one."),
  ),
});

const SummarySchema = {
  sum: v.pipe(v.number(), v.description("Sum of the bucket values.")),
  average: v.pipe(v.number(), v.description("Mean of the bucket values (empty buckets count), 2 decimals.")),
  min: v.pipe(v.number(), v.description("Smallest bucket value (empty buckets are 0).")),
  max: v.pipe(v.number(), v.description("Largest bucket value (empty buckets are 0).")),
};

const ChartMetricsSchema = v.object({
  ...SummarySchema,
  previous: v.optional(
    v.pipe(
      v.object({
        sum: ComparisonSchema,
        average: ComparisonSchema,
        min: ComparisonSchema,
        max: ComparisonSchema,
      }),
      v.description("With `previous=true`: the same summaries over the previous period's buckets."),
    ),
  ),
});

const ChartSeriesSchema = v.object({
  id: v.pipe(
    v.string(),
    v.description(
      "Stable id: `a<n>` for the n-th requested series, plus `-<hash of the breakdown values>` with breakdowns.",
    ),
  ),
  names: v.pipe(
    v.array(v.string()),
    v.description(`The series name, then each breakdown value (\`${NOT_SET_LABEL}\` where not set).`),
  ),
  event: v.object({
    id: v.pipe(v.string(), v.description("`a<n>`: the requested series this one comes from.")),
    name: v.pipe(v.string(), v.description("The event name, or `*`.")),
    breakdowns: v.optional(
      v.pipe(
        v.record(v.string(), v.nullable(v.string())),
        v.description("Only with breakdowns: each breakdown name as given → its value (null where not set)."),
      ),
    ),
  }),
  metrics: ChartMetricsSchema,
  data: v.array(
    v.object({
      date: v.pipe(v.string(), v.description("Bucket start, RFC 3339 with the offset of `timezone`.")),
      count: v.pipe(v.number(), v.description("The segment's value in the bucket; 0 when empty.")),
      previous: v.optional(
        v.pipe(
          ComparisonSchema,
          v.description(
            "With `previous=true`: the previous period's bucket at the same position (absent when that period has fewer buckets).",
          ),
        ),
      ),
    }),
  ),
});

const ChartResponse = v.pipe(
  v.object({
    series: v.pipe(
      v.array(ChartSeriesSchema),
      v.description("Sorted by `metrics.sum` desc, then series name, request order, breakdown values."),
    ),
    metrics: v.pipe(
      ChartMetricsSchema,
      v.description("The same summaries over every series' bucket values."),
    ),
    meta: v.object({
      startDate: v.string(),
      endDate: v.pipe(v.string(), v.description("Last included millisecond.")),
      timezone: v.string(),
      interval: v.picklist(INTERVALS),
      truncated: v.pipe(v.boolean(), v.description("Some breakdown series were cut at `limit`.")),
      previous: v.optional(
        v.pipe(
          v.object({ startDate: v.string(), endDate: v.string() }),
          v.description("With `previous=true`: the previous period's window."),
        ),
      ),
    }),
  }),
  v.metadata({ ref: "ChartResponse" }),
);

type Comparison = v.InferOutput<typeof ComparisonSchema>;
type ChartMetrics = v.InferOutput<typeof ChartMetricsSchema>;
type ChartSeries = v.InferOutput<typeof ChartSeriesSchema>;
type ChartBody = v.InferOutput<typeof ChartResponse>;

interface NormalizedSeries {
  name: string;
  segment: ChartSegment;
  /** Only for property segments. */
  property?: string;
  filters: RawFilter[];
}

/**
 * The requested series with the top-level `segment` and `property` applied. A property segment
 * without a property is a 400 at the series' `property` when the series chose the segment, else at
 * the top-level `property`.
 */
function normalizeSeries(query: ChartsInput): { param: string; series: NormalizedSeries[] } {
  if (query.series !== undefined && query.events !== undefined) {
    throw ApiError.invalid("events", "events is an alias of series: give one of them, not both");
  }
  const param = query.series !== undefined ? "series" : "events";
  const list: RawSeries[] | undefined = query.series ?? query.events;
  if (list === undefined) {
    throw ApiError.invalid(
      "series",
      'series is required: a JSON array of {name, filters?, segment?, property?}, e.g. [{"name":"screen_view"}]',
    );
  }
  const series = list.map((item, index): NormalizedSeries => {
    const segment = item.segment ?? query.segment;
    const base = { name: item.name, segment, filters: item.filters ?? [] };
    if (!isPropertySegment(segment)) return base;
    const property = item.property ?? query.property;
    if (property === undefined) {
      throw ApiError.invalid(
        item.segment === undefined ? "property" : `${param}/${index}/property`,
        `segment ${segment} needs a property: duration, revenue or properties.<key>`,
      );
    }
    return { ...base, property };
  });
  return { param, series };
}

/** Sum, mean, min and max of bucket values, as decimal text. */
function summarize(values: readonly string[]): Record<"sum" | "average" | "min" | "max", string> {
  if (values.length === 0) return { sum: "0", average: "0", min: "0", max: "0" };
  const sum = decimalSum(values);
  let min = values[0] ?? "0";
  let max = min;
  for (const value of values) {
    if (compareDecimals(value, min) < 0) min = value;
    if (compareDecimals(value, max) > 0) max = value;
  }
  return { sum, average: decimalMean(sum, values.length, 2), min, max };
}

function compare(current: string, previous: string): Comparison {
  const order = compareDecimals(current, previous);
  return {
    value: Number(previous),
    change: percentChange(current, previous),
    state: order > 0 ? "positive" : order < 0 ? "negative" : "neutral",
  };
}

function metricsOf(current: readonly string[], previous: readonly string[] | undefined): ChartMetrics {
  const now = summarize(current);
  const metrics: ChartMetrics = {
    sum: Number(now.sum),
    average: Number(now.average),
    min: Number(now.min),
    max: Number(now.max),
  };
  if (previous) {
    const before = summarize(previous);
    metrics.previous = {
      sum: compare(now.sum, before.sum),
      average: compare(now.average, before.average),
      min: compare(now.min, before.min),
      max: compare(now.max, before.max),
    };
  }
  return metrics;
}

/** 32-bit FNV-1a of the UTF-8 bytes, as 8 hex digits: short, stable ids for breakdown series. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

interface ShapedSeries {
  series: ChartSeries;
  /** Sort keys: the exact sum, request position and rank within the request. */
  sum: string;
  index: number;
  rank: number;
}

function shapeGroup(
  request: NormalizedSeries,
  index: number,
  rank: number,
  group: ChartGroup,
  breakdownNames: string[],
  dates: string[],
): ShapedSeries {
  const eventId = `a${index + 1}`;
  const hasBreakdowns = breakdownNames.length > 0;
  const previous = group.previous;
  const data = group.current.map((value, position) => {
    const partner = previous?.[position];
    return {
      date: dates[position] ?? "",
      count: Number(value),
      ...(partner === undefined ? {} : { previous: compare(value, partner) }),
    };
  });
  return {
    series: {
      id: hasBreakdowns ? `${eventId}-${fnv1a(JSON.stringify(group.breakdowns))}` : eventId,
      names: [request.name, ...group.breakdowns.map((value) => value ?? NOT_SET_LABEL)],
      event: {
        id: eventId,
        name: request.name,
        ...(hasBreakdowns
          ? {
              breakdowns: Object.fromEntries(
                breakdownNames.map((name, position) => [name, group.breakdowns[position] ?? null]),
              ),
            }
          : {}),
      },
      metrics: metricsOf(group.current, previous),
      data,
    },
    sum: decimalSum(group.current),
    index,
    rank,
  };
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Sum desc; ties by series name, request order, then the group's rank (its breakdown values). */
function bySumDesc(a: ShapedSeries, b: ShapedSeries): number {
  return (
    compareDecimals(b.sum, a.sum) ||
    byCodeUnit(a.series.event.name, b.series.event.name) ||
    a.index - b.index ||
    a.rank - b.rank
  );
}

const windowMeta = (window: { start: number; end: number }, timezone: string) => ({
  startDate: formatInstant(window.start, timezone, { milliseconds: window.start % 1000 !== 0 }),
  endDate: formatInstant(window.end - 1, timezone, { milliseconds: true }),
});

export const charts = new Hono<AppEnv>().get(
  "/charts",
  describeRoute({
    tags: ["Export"],
    summary: "Chart series of events",
    description:
      "Time series of up to 10 event series, each counted by a segment (events, visitors, sessions, averages, numeric properties), optionally split by up to 3 breakdowns and compared with the previous period. Buckets are zero-filled and labelled in `timezone`. Cached in KV (60 s for windows that reach now, 24 h for closed ones); `Cache-Control: no-cache` skips the cache.",
    responses: {
      200: { description: "Chart series", content: jsonContent(ChartResponse) },
      304: { description: "Not modified (If-None-Match matched the ETag)" },
      ...problemResponses(...PROJECT_ROUTE_PROBLEMS),
    },
  }),
  validate("query", ChartsQuery),
  async (c) => {
    const query = c.req.valid("query");
    const { param, series } = normalizeSeries(query);
    const project = c.get("project");
    const range = resolveRange({
      range: query.range,
      startDate: query.startDate,
      endDate: query.endDate,
      timezone: query.timezone ?? project.timezone,
      interval: query.interval,
      previous: query.previous === "true",
      now: new Date(),
      defaultRange: "30d",
      autoInterval: false,
    });
    const breakdownNames = (query.breakdowns ?? []).map((breakdown) => breakdown.name);
    const fingerprint = {
      window: range.window,
      timezone: range.timezone,
      interval: range.interval,
      previous: range.previous?.window ?? null,
      series,
      breakdowns: breakdownNames,
      limit: query.limit,
      filters: query.filters,
    };
    const key = await cacheKey(project.id, "charts", fingerprint);
    const answer = await readThrough(c, key, freshnessFor(range), async (): Promise<ChartBody> => {
      const db = useDatabase(c);
      const chartFilters = normalizeFilters(query.filters);
      const seriesFilters = series.map((item) => normalizeFilters(item.filters));
      await assertValidRegexes(db, chartFilters);
      for (const [index, filters] of seriesFilters.entries()) {
        await assertValidRegexes(db, filters, `${param}/${index}/filters`);
      }
      const breakdowns = breakdownNames.map((name, index): FilterField => {
        const field = resolveFilterField(name);
        // Unreachable after validation; a 400 rather than a 500 if a caller ever skips it.
        if (!field) throw ApiError.invalid(`breakdowns/${index}/name`, `unknown breakdown ${name}`);
        return field;
      });
      const current = { window: range.window, buckets: range.buckets };
      const results: ChartSeriesResult[] = await Promise.all(
        series.map((item, index) =>
          chartSeries(db, {
            projectId: project.id,
            event: item.name,
            segment: item.segment,
            property: item.property === undefined ? undefined : resolveFilterField(item.property),
            filters: [...chartFilters, ...(seriesFilters[index] ?? [])],
            breakdowns,
            limit: query.limit,
            current,
            previous: range.previous,
            rollups: rollupsAllowed(c),
          }),
        ),
      );

      const dates = range.buckets.map((start) => formatInstant(start, range.timezone));
      const shaped = results
        .flatMap((result, index) => {
          const request = series[index] as NormalizedSeries;
          return result.groups.map((group, rank) =>
            shapeGroup(request, index, rank, group, breakdownNames, dates),
          );
        })
        .sort(bySumDesc);
      const previousValues = range.previous
        ? results.flatMap((result) => result.groups.flatMap((group) => group.previous ?? []))
        : undefined;
      return {
        series: shaped.map((item) => item.series),
        metrics: metricsOf(
          results.flatMap((result) => result.groups.flatMap((group) => group.current)),
          previousValues,
        ),
        meta: {
          ...range.meta,
          truncated: results.some((result) => result.truncated),
          ...(range.previous ? { previous: windowMeta(range.previous.window, range.timezone) } : {}),
        },
      };
    });
    return sendJson(c, {
      body: answer.value,
      freshFor: answer.freshFor,
      cacheStatus: answer.cacheStatus,
    });
  },
);
