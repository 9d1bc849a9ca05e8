import * as v from "valibot";

/** The records and pages of `/export/events` (contract section 6); the TypeScript types derive from them. */

const nullableText = v.nullable(v.string());

export const ExportedEventSchema = v.pipe(
  v.object({
    id: v.pipe(v.string(), v.description("Event id (UUID); pass it as `after` to resume after this event.")),
    name: v.string(),
    deviceId: v.string(),
    profileId: v.string(),
    sessionId: v.string(),
    projectId: v.string(),
    createdAt: v.pipe(
      v.string(),
      v.description("RFC 3339 in UTC with milliseconds, e.g. 2026-11-01T10:00:00.123Z."),
    ),
    path: nullableText,
    duration: v.pipe(v.number(), v.description("Time on page in milliseconds.")),
    revenue: v.pipe(v.number(), v.description("Revenue in cents.")),
    country: nullableText,
    city: nullableText,
    os: nullableText,
    browser: nullableText,
    profile: v.optional(
      v.pipe(
        v.nullable(
          v.object({
            id: v.string(),
            firstName: nullableText,
            lastName: nullableText,
            email: nullableText,
            avatar: nullableText,
            isExternal: v.boolean(),
            properties: v.record(v.string(), v.unknown()),
            createdAt: v.string(),
            lastSeenAt: nullableText,
          }),
        ),
        v.description("`includes=profile`: the profile of `profileId`, or null when there is none."),
      ),
    ),
    meta: v.optional(
      v.pipe(
        v.nullable(
          v.object({
            name: v.string(),
            description: nullableText,
            conversion: v.boolean(),
            color: nullableText,
            icon: nullableText,
          }),
        ),
        v.description("`includes=meta`: metadata of the event name, or null when there is none."),
      ),
    ),
    properties: v.optional(
      v.pipe(v.record(v.string(), v.unknown()), v.description("`includes=properties`.")),
    ),
    region: v.optional(v.pipe(nullableText, v.description("`includes=geo`."))),
    latitude: v.optional(v.pipe(v.nullable(v.number()), v.description("`includes=geo`."))),
    longitude: v.optional(v.pipe(v.nullable(v.number()), v.description("`includes=geo`."))),
    device: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    brand: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    model: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    osVersion: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    browserVersion: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    origin: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    referrer: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    referrerName: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    referrerType: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmSource: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmMedium: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmCampaign: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmTerm: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmContent: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
  }),
  v.metadata({ ref: "ExportedEvent" }),
);

export const EventPageSchema = v.object({
  meta: v.object({
    count: v.pipe(v.number(), v.description("Events in `data`.")),
    limit: v.number(),
    hasMore: v.pipe(v.boolean(), v.description("More events follow this page.")),
    next: v.pipe(v.nullable(v.string()), v.description("Cursor of the next page, or null on the last one.")),
    totalCount: v.optional(
      v.pipe(v.number(), v.description("With `page` or `totalCount=true`: all events of the selection.")),
    ),
    pages: v.optional(
      v.pipe(v.number(), v.description("With `page` or `totalCount=true`: pages of `limit`.")),
    ),
    current: v.optional(
      v.pipe(v.number(), v.description("With `page` or `totalCount=true`: the number of this page.")),
    ),
  }),
  data: v.array(ExportedEventSchema),
});

/** One exported event; each `includes` group adds exactly its own keys. */
export type ExportedEvent = v.InferOutput<typeof ExportedEventSchema>;
export type ExportedProfile = NonNullable<ExportedEvent["profile"]>;
export type ExportedEventMeta = NonNullable<ExportedEvent["meta"]>;
export type EventPage = v.InferOutput<typeof EventPageSchema>;
