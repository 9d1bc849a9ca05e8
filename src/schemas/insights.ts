import * as v from "valibot";

/**
 * The answers of the insights routes (contract sections 4 and 5): the TypeScript row types the
 * queries return derive from these schemas, and the OpenAPI document shows the same schemas.
 */

export const MetricsSchema = v.object({
  bounce_rate: v.pipe(v.number(), v.description("100 × bounced sessions / sessions (2 decimals).")),
  unique_visitors: v.pipe(v.number(), v.description("Distinct visitors among the sessions.")),
  total_sessions: v.pipe(v.number(), v.description("Sessions whose first event lies in the window.")),
  avg_session_duration: v.pipe(
    v.number(),
    v.description("Mean session length in seconds, over sessions longer than 0."),
  ),
  total_screen_views: v.number(),
  views_per_session: v.number(),
  total_revenue: v.pipe(v.number(), v.description("Sum of the sessions' revenue, in cents.")),
});
export const SeriesPointSchema = v.object({
  date: v.pipe(v.string(), v.description("Bucket start, RFC 3339 with the offset of `timezone`.")),
  ...MetricsSchema.entries,
});
/** The window and how the figures were made, as `/metrics` and `/overview` state them. */
const MetricsMetaSchema = v.object({
  startDate: v.string(),
  endDate: v.string(),
  timezone: v.string(),
  interval: v.string(),
  requestedStartDate: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "Only when a window longer than 2 years was clamped to the project's history: the start asked for (`startDate` is then the local day of the first event).",
      ),
    ),
  ),
  approximate: v.pipe(v.array(v.string()), v.description("Metrics computed from sketches (±2 %).")),
});

export const MetricsResponse = v.pipe(
  v.object({
    metrics: MetricsSchema,
    series: v.array(SeriesPointSchema),
    previous: v.optional(v.object({ metrics: MetricsSchema, series: v.array(SeriesPointSchema) })),
    meta: MetricsMetaSchema,
  }),
  v.metadata({ ref: "MetricsResponse" }),
);

/** OpenPanel's `/overview`: `/metrics` reshaped (contract A4). */
export const OverviewResponse = v.pipe(
  v.object({
    summary: MetricsSchema,
    series: v.array(SeriesPointSchema),
    interval: v.string(),
    startDate: v.pipe(v.string(), v.description("The window's start, as `meta.startDate`.")),
    endDate: v.pipe(v.string(), v.description("The window's last included millisecond, as `meta.endDate`.")),
    previous: v.optional(
      v.pipe(
        v.object({ summary: MetricsSchema, series: v.array(SeriesPointSchema) }),
        v.description("With `previous=true`: the previous period's summary and series."),
      ),
    ),
    meta: MetricsMetaSchema,
  }),
  v.metadata({ ref: "OverviewResponse" }),
);

export const PageRowSchema = v.object({
  title: v.pipe(v.nullable(v.string()), v.description("A title seen for the page, or null.")),
  origin: v.nullable(v.string()),
  path: v.nullable(v.string()),
  sessions: v.pipe(v.number(), v.description("Sessions with a screen view of this page.")),
  pageviews: v.pipe(v.number(), v.description("Screen views of this page in those sessions.")),
  bounce_rate: v.pipe(v.number(), v.description("Bounce rate over those sessions (percent, 2 decimals).")),
  avg_duration: v.pipe(v.number(), v.description("Mean time on page in seconds, over views longer than 0.")),
  revenue: v.pipe(
    v.number(),
    v.description("Revenue (cents) carried by those screen views, as OpenPanel's rows; usually 0."),
  ),
});

/** `/pages/performance` (contract A4): every page with its figures and SEO signals. */
export const PagePerformanceResponse = v.pipe(
  v.object({
    total_pages: v.pipe(v.number(), v.description("Pages matching `search`, uncapped.")),
    shown: v.pipe(v.number(), v.description("Rows in this page.")),
    pages: v.array(
      v.object({
        origin: v.nullable(v.string()),
        path: v.nullable(v.string()),
        title: v.pipe(v.string(), v.description('A title seen for the page, "" when unknown.')),
        sessions: v.pipe(v.number(), v.description("Sessions with a screen view of this page.")),
        pageviews: v.pipe(v.number(), v.description("Screen views of this page in those sessions.")),
        avg_duration: v.pipe(
          v.number(),
          v.description("Mean time on page in **minutes**, over views longer than 0."),
        ),
        bounce_rate: v.pipe(
          v.number(),
          v.description("Bounce rate over those sessions (percent, 2 decimals)."),
        ),
        seo_signals: v.object({
          high_bounce: v.pipe(v.boolean(), v.description("bounce_rate > 70")),
          low_engagement: v.pipe(v.boolean(), v.description("avg_duration < 1 (minute)")),
          good_landing_page: v.pipe(v.boolean(), v.description("bounce_rate < 40 and avg_duration > 2")),
        }),
      }),
    ),
    meta: v.object({
      startDate: v.string(),
      endDate: v.string(),
      timezone: v.string(),
      hasMore: v.pipe(v.boolean(), v.description("Another page follows (its cursor is in `X-Next-Cursor`).")),
    }),
  }),
  v.metadata({ ref: "PagePerformanceResponse" }),
);

export const BreakdownRowSchema = v.object({
  name: v.pipe(
    v.nullable(v.string()),
    v.description("The value, or null where it is not set (e.g. direct traffic)."),
  ),
  prefix: v.optional(
    v.pipe(
      v.nullable(v.string()),
      v.description("Only on region/city (the country), browser_version (the browser), os_version (the OS)."),
    ),
  ),
  sessions: v.number(),
  pageviews: v.pipe(v.number(), v.description("Screen views of those sessions.")),
  bounce_rate: v.number(),
  avg_session_duration: v.pipe(v.number(), v.description("Seconds, over sessions longer than 0.")),
  revenue: v.pipe(
    v.number(),
    v.description("Revenue of those sessions' events (cents), as OpenPanel's rows carry."),
  ),
});

export const LiveSchema = v.object({
  visitors: v.pipe(v.number(), v.description("Distinct visitors with any event in the window.")),
});

export type SessionMetrics = v.InferOutput<typeof MetricsSchema>;
export type MetricsBody = v.InferOutput<typeof MetricsResponse>;
export type OverviewBody = v.InferOutput<typeof OverviewResponse>;
export type PagePerformanceBody = v.InferOutput<typeof PagePerformanceResponse>;
export type PageRow = v.InferOutput<typeof PageRowSchema>;
export type BreakdownRow = v.InferOutput<typeof BreakdownRowSchema>;
