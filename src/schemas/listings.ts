import * as v from "valibot";

/** The rows of the listings (contract A3): OpenPanel's snake_case rows; the TypeScript types derive from these. */

const text = (description?: string) =>
  description ? v.pipe(v.nullable(v.string()), v.description(description)) : v.nullable(v.string());

/** Where and on what: the same fields, in the same order, on event and session rows. */
const GEO_AND_TECHNOLOGY = {
  country: text(),
  region: text(),
  city: text(),
  latitude: v.nullable(v.number()),
  longitude: v.nullable(v.number()),
  device: text(),
  brand: text(),
  model: text(),
  browser: text(),
  browser_version: text(),
  os: text(),
  os_version: text(),
};

export const EventRowSchema = v.pipe(
  v.object({
    id: v.string(),
    name: v.string(),
    device_id: v.string(),
    profile_id: v.string(),
    project_id: v.string(),
    session_id: v.string(),
    created_at: v.pipe(v.string(), v.description("RFC 3339 in UTC with milliseconds.")),
    path: text(),
    origin: text(),
    title: text(),
    referrer: text(),
    referrer_name: text(),
    referrer_type: text(),
    duration: v.pipe(v.number(), v.description("Milliseconds.")),
    revenue: v.pipe(v.number(), v.description("Cents.")),
    properties: v.pipe(
      v.record(v.string(), v.string()),
      v.description(
        "Each flattened key (`a.b`, `items.0.sku`) with a set value, mapped to its text (a number's JSON text, `true`/`false`).",
      ),
    ),
    ...GEO_AND_TECHNOLOGY,
    utm_source: text(),
    utm_medium: text(),
    utm_campaign: text(),
    utm_term: text(),
    utm_content: text(),
    imported_at: v.pipe(v.null(), v.description("Not stored by this service: always null.")),
    sdk_name: v.pipe(v.null(), v.description("Not stored by this service: always null.")),
    sdk_version: v.pipe(v.null(), v.description("Not stored by this service: always null.")),
    groups: v.pipe(v.array(v.string()), v.description("Groups are not supported: always [].")),
  }),
  v.metadata({ ref: "EventRow" }),
);

export type EventRow = v.InferOutput<typeof EventRowSchema>;

export const SessionRowSchema = v.pipe(
  v.object({
    id: v.string(),
    profile_id: v.pipe(v.string(), v.description("The visitor.")),
    device_id: v.string(),
    project_id: v.string(),
    duration: v.pipe(v.number(), v.description("Milliseconds from its first to its last event.")),
    created_at: v.pipe(v.string(), v.description("Its first event, RFC 3339 in UTC with milliseconds.")),
    ended_at: v.pipe(v.string(), v.description("Its last event.")),
    event_count: v.number(),
    screen_view_count: v.number(),
    is_bounce: v.pipe(v.boolean(), v.description("At most one screen view.")),
    entry_path: text("First screen view's path; null without one."),
    entry_origin: text(),
    exit_path: text("Last screen view's path; null without one."),
    exit_origin: text(),
    referrer: text(),
    referrer_name: text(),
    referrer_type: text(),
    utm_source: text(),
    utm_medium: text(),
    utm_campaign: text(),
    utm_term: text(),
    utm_content: text(),
    ...GEO_AND_TECHNOLOGY,
    revenue: v.pipe(v.number(), v.description("Cents, over its events.")),
    groups: v.pipe(v.array(v.string()), v.description("Groups are not supported: always [].")),
  }),
  v.metadata({ ref: "SessionRow" }),
);

export type SessionRow = v.InferOutput<typeof SessionRowSchema>;

export const ProfileRowSchema = v.pipe(
  v.object({
    id: v.pipe(v.string(), v.description("The profile_id.")),
    first_name: text("From the stored profile record; null without one (anonymous visitors)."),
    last_name: text(),
    email: text(),
    avatar: text(),
    properties: v.pipe(
      v.record(v.string(), v.unknown()),
      v.description("The stored profile record's properties; {} without one."),
    ),
    project_id: v.string(),
    is_external: v.pipe(
      v.boolean(),
      v.description("Identified: some event of it has profile_id <> device_id."),
    ),
    created_at: v.pipe(v.string(), v.description("Its first event ever, RFC 3339 in UTC with milliseconds.")),
    last_seen_at: v.pipe(v.string(), v.description("Its latest event ever.")),
    groups: v.pipe(v.array(v.string()), v.description("Groups are not supported: always [].")),
  }),
  v.metadata({ ref: "ProfileRow" }),
);

export type ProfileRow = v.InferOutput<typeof ProfileRowSchema>;
