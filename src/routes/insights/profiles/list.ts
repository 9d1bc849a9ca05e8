import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { validate } from "../../../middleware/validate";
import { LAST_KNOWN_ATTRIBUTES, listProfiles } from "../../../queries/listings/profiles";
import { ProfileRowSchema } from "../../../schemas/listings";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../../openapi";
import { CursorParam, FlagParam, LimitParam, OneOfParam, RangeParams, WholeNumberParam } from "../../params";
import { answerListing } from "../listing";
import { resolveLifetimeScope } from "../scope";

/** At most this many whitespace-separated tokens in `name` (contract A3). */
const NAME_TOKENS = 5;

const text = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));

const ProfilesQuery = v.object({
  ...RangeParams,
  name: v.optional(
    v.pipe(
      v.string(),
      v.description(
        `Up to ${NAME_TOKENS} whitespace-separated tokens, each a case-insensitive literal substring of the id, email, first name, last name or "first last"; all must match.`,
      ),
      v.transform((value) => value.split(/\s+/).filter((token) => token !== "")),
      v.maxLength(NAME_TOKENS, `name holds at most ${NAME_TOKENS} whitespace-separated tokens`),
    ),
  ),
  email: text("Case-insensitive literal substring of the stored email."),
  country: text("Only profiles whose latest event has exactly this `country`."),
  city: text("Only profiles whose latest event has exactly this `city`."),
  device: text("Only profiles whose latest event has exactly this `device`."),
  browser: text("Only profiles whose latest event has exactly this `browser`."),
  identified: v.optional(
    FlagParam("identified", "Only identified (`true`) or only anonymous (`false`) profiles."),
  ),
  inactiveDays: v.optional(
    WholeNumberParam("inactiveDays", 36_500, "Only profiles last seen more than N × 24 hours ago (1–36500)."),
  ),
  minSessions: v.optional(
    WholeNumberParam(
      "minSessions",
      100_000,
      "Only profiles with at least N sessions starting in the window (ever, without one); 1–100000.",
    ),
  ),
  performedEvent: text("Only profiles with an event of this name in the window."),
  sortOrder: v.optional(
    OneOfParam("sortOrder", ["asc", "desc"], "By first seen, then id, in this direction (default `desc`)."),
    "desc",
  ),
  limit: LimitParam(20, 100),
  cursor: CursorParam,
});

export const profileListing = new Hono<AppEnv>().get(
  "/:projectId/profiles",
  describeRoute({
    operationId: "listProfiles",
    tags: ["Listings"],
    summary: "Profiles, by first seen",
    description:
      "Every profile_id with an event (anonymous visitors included), by `created_at` (first event ever) then id, newest first unless `sortOrder=asc`. Lifetime unless a window is given; then only profiles with an event in it. `country`, `city`, `device` and `browser` match the profile's latest event; `filters` keep a profile when one of its events in the window passes them all. Paged by keyset: `Link`/`X-Next-Cursor` lead to the next page.",
    responses: cachedAnswerResponses({
      description: "Profile rows",
      schema: v.array(ProfileRowSchema),
      headers: LIST_RESPONSE_HEADERS,
    }),
  }),
  validate("query", ProfilesQuery),
  (c) => {
    const query = c.req.valid("query");
    const scope = resolveLifetimeScope(c, query);
    const lastKnown = Object.fromEntries(
      LAST_KNOWN_ATTRIBUTES.flatMap((attribute) => {
        const value = query[attribute];
        return value === undefined ? [] : [[attribute, value]];
      }),
    );
    const selection = {
      nameTokens: query.name ?? [],
      email: query.email === "" ? undefined : query.email,
      lastKnown,
      identified: query.identified === undefined ? undefined : query.identified === "true",
      inactiveDays: query.inactiveDays,
      minSessions: query.minSessions,
      performedEvent: query.performedEvent,
      order: query.sortOrder,
    };
    return answerListing(c, {
      route: "profiles",
      scope,
      filters: scope.filters,
      inputs: selection,
      limit: query.limit,
      cursor: query.cursor,
      read: (db, page) =>
        listProfiles(
          db,
          {
            projectId: c.get("project").id,
            window: scope.lifetime ? undefined : scope.range.window,
            filters: scope.filters,
            ...selection,
          },
          page,
        ),
    });
  },
);
