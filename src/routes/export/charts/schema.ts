import * as v from "valibot";
import { INTERVALS } from "../../../lib/buckets";
import { type FilterField, FilterList, FiltersParam, resolveFilterField } from "../../../lib/filter-parser";
import { RANGE_PRESETS } from "../../../lib/range";
import { jsonQueryParam } from "../../../lib/validation";
import { CHART_SEGMENTS, MAX_CHART_BREAKDOWNS } from "../../../queries/charts/model";
import { NOT_SET_LABEL } from "../../../schemas/charts";
import { FlagParam, OneOfParam, ProjectParams, RangeParams, WholeNumberParam } from "../../params";

/** The query parameters of `/export/charts` (contract section 7), validated and documented. */

const MAX_SERIES = 10;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;

const segmentList = CHART_SEGMENTS.join(", ");

const Segment = v.picklist(CHART_SEGMENTS, (issue) =>
  issue.input === undefined
    ? `segment must be one of ${segmentList}`
    : `unknown segment ${JSON.stringify(issue.input)}; use one of ${segmentList}`,
);

/** A field a property segment can aggregate: `duration`, `revenue` or `properties.<key>`. */
export function numericField(name: string): FilterField | undefined {
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

export type RawSeries = v.InferOutput<typeof SeriesItem>;

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

export const ChartsQuery = v.object({
  ...ProjectParams,
  series: v.optional(
    jsonQueryParam({
      param: "series",
      schema: SeriesList,
      schemaName: "SeriesList",
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
      schemaName: "SeriesList",
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
      schemaName: "BreakdownList",
      expected: "a JSON array of {name} objects",
      description: BREAKDOWNS_DESCRIPTION,
      example: '[{"name":"browser"},{"name":"country"}]',
    }),
  ),
  limit: v.optional(
    WholeNumberParam(
      "limit",
      MAX_LIMIT,
      `Breakdown series kept per series, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT}), largest \`sum\` first; \`meta.truncated\` says when some were cut. Larger values are refused, never clamped.`,
    ),
    String(DEFAULT_LIMIT),
  ),
  interval: v.optional(
    OneOfParam(
      "interval",
      INTERVALS,
      "Bucket size (default `day`); weeks start on Monday. More than 2000 buckets is a 400.",
    ),
    "day",
  ),
  range: v.optional(
    OneOfParam(
      "range",
      RANGE_PRESETS,
      "Preset window in `timezone` (default `30d`). `startDate` + `endDate` win over it.",
    ),
  ),
  startDate: RangeParams.startDate,
  endDate: RangeParams.endDate,
  timezone: RangeParams.timezone,
  filters: v.optional(v.pipe(FiltersParam.wrapped, v.description(CHART_FILTERS_DESCRIPTION)), "[]"),
  previous: v.optional(
    FlagParam(
      "previous",
      "Adds `previous` to every data point and to `metrics`: the period ending where this one starts, as many local days long for whole-day windows (else as long), its buckets paired by position.",
    ),
    "false",
  ),
});

export type ChartsInput = v.InferOutput<typeof ChartsQuery>;
