import * as v from "valibot";
import { EventRowSchema, ProfileRowSchema } from "./listings";

/** The bodies of `/profiles/{profileId}` and its metrics (contract A3); the TypeScript types derive from these. */

/** The window an object body was read over; `startDate` is null for the lifetime default. */
export const ProfileWindowMetaSchema = v.object({
  startDate: v.pipe(
    v.nullable(v.string()),
    v.description(
      "The window's start, RFC 3339 with the zone's offset; null: the whole history (the default).",
    ),
  ),
  endDate: v.pipe(
    v.string(),
    v.description("The window's last included millisecond (now, for the whole history)."),
  ),
  timezone: v.string(),
});

export const ProfileDetailSchema = v.pipe(
  v.object({
    profile: ProfileRowSchema,
    recentEvents: v.pipe(
      v.array(EventRowSchema),
      v.description("Its newest events of the window that pass every filter, at most `eventLimit`."),
    ),
    meta: ProfileWindowMetaSchema,
  }),
  v.metadata({ ref: "ProfileDetail" }),
);

export type ProfileDetail = v.InferOutput<typeof ProfileDetailSchema>;

const count = (description: string) => v.pipe(v.number(), v.description(description));

export const ProfileMetricsSchema = v.pipe(
  v.object({
    profileId: v.string(),
    firstSeen: v.pipe(
      v.nullable(v.string()),
      v.description("Its first event of the scope, RFC 3339 UTC; null when none."),
    ),
    lastSeen: v.pipe(v.nullable(v.string()), v.description("Its last event of the scope; null when none.")),
    sessions: count(
      "Sessions whose visitor it is, started in the window (from sessions, not session_start events).",
    ),
    screenViews: count("Its screen_view events."),
    totalEvents: count("All its events."),
    conversionEvents: count("Its events not named screen_view, session_start or session_end."),
    uniqueDaysActive: count("Distinct local days (request timezone) holding one of its events."),
    avgSessionDurationMin: count(
      "Mean duration of its sessions lasting more than 0 ms, in minutes (2 decimals).",
    ),
    p90SessionDurationMin: count(
      "90th percentile (linear interpolation) of the same durations, minutes; 0 when none.",
    ),
    avgEventsPerSession: count("Events of its sessions ÷ its sessions (2 decimals)."),
    avgTimeBetweenSessionsSec: count(
      "(Start of its last session − start of its first) ÷ (sessions − 1), seconds; 0 with at most one session.",
    ),
    bounceRate: count("Percent of its sessions with at most one screen view, 0–100."),
    revenue: count("Sum of its events' revenue, cents."),
    meta: ProfileWindowMetaSchema,
  }),
  v.metadata({ ref: "ProfileMetrics" }),
);

export type ProfileMetrics = v.InferOutput<typeof ProfileMetricsSchema>;
