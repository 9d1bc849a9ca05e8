import * as v from "valibot";
import { INTERVALS } from "../lib/buckets";

/** The answer of `/export/charts` (contract section 7); the TypeScript types derive from it. */

/** The label of a breakdown value that is not set, in `names` (the `breakdowns` object keeps null). */
export const NOT_SET_LABEL = "(not set)";

export const ComparisonSchema = v.object({
  value: v.pipe(v.number(), v.description("The previous period's value.")),
  change: v.pipe(
    v.nullable(v.number()),
    v.description("Signed percent change relative to |previous value|, 1 decimal; null when it is 0."),
  ),
  diff: v.pipe(
    v.nullable(v.number()),
    v.description(
      "OpenPanel's unsigned percent change: |change|, 1 decimal; null when the previous value is 0 or equals the current one. Read `state` for the direction.",
    ),
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

export const ChartMetricsSchema = v.object({
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

export const ChartSeriesSchema = v.object({
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

export const ChartResponse = v.pipe(
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
      requestedStartDate: v.optional(
        v.pipe(
          v.string(),
          v.description(
            "Only when a window longer than 2 years was clamped to the project's history: the start asked for (`startDate` is then the local day of the first event).",
          ),
        ),
      ),
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

export type Comparison = v.InferOutput<typeof ComparisonSchema>;
export type ChartMetrics = v.InferOutput<typeof ChartMetricsSchema>;
export type ChartSeries = v.InferOutput<typeof ChartSeriesSchema>;
export type ChartBody = v.InferOutput<typeof ChartResponse>;
