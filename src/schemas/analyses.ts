import * as v from "valibot";

/** The bodies of the product analyses (contract A5–A7); the TypeScript types derive from these. */

const percent = (description: string) =>
  v.pipe(v.number(), v.description(`${description} Percent 0–100, 2 decimals.`));

export const FunnelStepSchema = v.object({
  step: v.pipe(v.number(), v.description("1-based position in `steps`.")),
  eventName: v.string(),
  users: v.pipe(
    v.number(),
    v.description("Groups (sessions by default, profiles with `groupBy=profile_id`) that reached this step."),
  ),
  conversionRateFromStart: percent("100 × users ÷ the first step's users."),
  dropoffCount: v.pipe(
    v.nullable(v.number()),
    v.description("users − the next step's users; null on the last step."),
  ),
  dropoffPercent: v.pipe(
    v.nullable(v.number()),
    v.description(
      "100 × dropoffCount ÷ users (the loss to the next step), 2 decimals; null on the last step.",
    ),
  ),
  isHighestDropoff: v.pipe(
    v.boolean(),
    v.description("True on the first step with the largest dropoffCount, when that is above 0."),
  ),
});

export const FunnelResponseSchema = v.pipe(
  v.object({
    steps: v.array(FunnelStepSchema),
    totalUsers: v.pipe(v.number(), v.description("The first step's users.")),
    completedUsers: v.pipe(v.number(), v.description("The last step's users.")),
    overallConversionRate: percent("100 × completedUsers ÷ totalUsers."),
    meta: v.object({
      startDate: v.string(),
      endDate: v.string(),
      timezone: v.string(),
      groupBy: v.picklist(["session_id", "profile_id"]),
      windowHours: v.number(),
    }),
  }),
  v.metadata({ ref: "FunnelResponse" }),
);

export type FunnelResponse = v.InferOutput<typeof FunnelResponseSchema>;
export type FunnelStep = v.InferOutput<typeof FunnelStepSchema>;

export const EngagementResponseSchema = v.pipe(
  v.object({
    summary: v.object({
      total_identified_users: v.pipe(
        v.number(),
        v.description("Identified users with an identified event in the window."),
      ),
      active_last_7_days: v.pipe(v.number(), v.description("Last active 0–7 days before the reference day.")),
      active_8_to_14_days: v.number(),
      active_15_to_30_days: v.number(),
      inactive_31_to_60_days: v.number(),
      churned_60_plus_days: v.pipe(v.number(), v.description("Last active more than 60 days before.")),
    }),
    distribution: v.pipe(
      v.array(v.object({ days: v.number(), users: v.number() })),
      v.description(
        "Users per number of local days since their last activity, ascending; only days with users.",
      ),
    ),
    meta: v.object({
      startDate: v.nullable(v.string()),
      endDate: v.string(),
      timezone: v.string(),
      referenceDate: v.pipe(v.string(), v.description("The day `days` count to, YYYY-MM-DD in `timezone`.")),
    }),
  }),
  v.metadata({ ref: "EngagementResponse" }),
);

export type EngagementResponse = v.InferOutput<typeof EngagementResponseSchema>;

export const ActiveUsersResponseSchema = v.pipe(
  v.object({
    window_days: v.pipe(
      v.number(),
      v.description("`days`: each point counts the users of that many local days."),
    ),
    label: v.pipe(v.string(), v.description("`DAU` (1), `WAU` (7), `MAU` (30), else `<n>d active`.")),
    series: v.pipe(
      v.array(
        v.object({
          date: v.pipe(v.string(), v.description("The local day D, YYYY-MM-DD.")),
          users: v.pipe(v.number(), v.description("Distinct users with an event on days D − days + 1 … D.")),
        }),
      ),
      v.description("Every local day of the window up to today, ascending (today's count is partial)."),
    ),
    meta: v.object({ startDate: v.nullable(v.string()), endDate: v.string(), timezone: v.string() }),
  }),
  v.metadata({ ref: "ActiveUsersResponse" }),
);

export type ActiveUsersResponse = v.InferOutput<typeof ActiveUsersResponseSchema>;

export const CohortRowSchema = v.object({
  cohort_interval: v.pipe(
    v.string(),
    v.description("The cohort's Monday (YYYY-MM-DD), or `Weighted Average` on the first row."),
  ),
  sum: v.pipe(
    v.number(),
    v.description("Cohort size (the average row: the mean size of non-empty cohorts, rounded)."),
  ),
  values: v.pipe(
    v.array(v.number()),
    v.description("Users per week offset 0…N−1 (`on`: active that week; `on_or_after`: that week or later)."),
  ),
  percentages: v.pipe(v.array(v.number()), v.description("values ÷ sum, a fraction 0–1 with 2 decimals.")),
  observed: v.pipe(
    v.number(),
    v.description("How many leading cells are real: their week has begun and lies in the window."),
  ),
});

export const RetentionCohortResponse = v.pipe(
  v.array(CohortRowSchema),
  v.metadata({ ref: "RetentionCohorts" }),
);
export type CohortRow = v.InferOutput<typeof CohortRowSchema>;

export const WeeklyReturnRowSchema = v.object({
  date: v.pipe(v.string(), v.description("The week's Monday, YYYY-MM-DD.")),
  active_users: v.pipe(v.number(), v.description("Identified users with an event in the week.")),
  retained_users: v.pipe(
    v.number(),
    v.description("Those with an event the week after too (0 while it has not begun)."),
  ),
  retention: v.pipe(v.number(), v.description("100 × retained ÷ active, percent 0–100, 2 decimals.")),
  complete: v.pipe(v.boolean(), v.description("Whether the week after has ended.")),
});

export const WeeklyReturnResponse = v.pipe(
  v.array(WeeklyReturnRowSchema),
  v.metadata({ ref: "WeeklyRetention" }),
);
export type WeeklyReturnRow = v.InferOutput<typeof WeeklyReturnRowSchema>;

export const UserFlowResponseSchema = v.pipe(
  v.object({
    mode: v.picklist(["after", "before", "between"]),
    startEvent: v.string(),
    endEvent: v.pipe(v.nullable(v.string()), v.description("The end label in `between` mode, else null.")),
    paths: v.boolean(),
    totalSessions: v.pipe(v.number(), v.description("Sessions drawn.")),
    skippedSessions: v.pipe(v.number(), v.description("`between` cuts longer than `steps`, not drawn.")),
    node_count: v.number(),
    link_count: v.number(),
    nodes: v.array(
      v.object({
        id: v.pipe(v.string(), v.description("`<label>::step<n>`.")),
        label: v.string(),
        nodeColor: v.string(),
        percentage: v.pipe(v.number(), v.description("100 × value ÷ totalSessions, 2 decimals.")),
        value: v.pipe(v.number(), v.description("Sessions with this label at this step.")),
        step: v.number(),
      }),
    ),
    links: v.array(
      v.object({
        source: v.string(),
        target: v.string(),
        value: v.pipe(v.number(), v.description("Sessions with these labels at consecutive steps.")),
      }),
    ),
    meta: v.object({ startDate: v.nullable(v.string()), endDate: v.string(), timezone: v.string() }),
  }),
  v.metadata({ ref: "UserFlowResponse" }),
);

export type UserFlowResponse = v.InferOutput<typeof UserFlowResponseSchema>;
