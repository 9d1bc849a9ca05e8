import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { normalizeFilters, PROPERTY_PREFIX, type RawFilter } from "../../lib/filter-parser";
import { validate } from "../../middleware/validate";
import { listEvents } from "../../queries/listings/events";
import { EventRowSchema } from "../../schemas/listings";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { CursorParam, LimitParam, RangeParams, StringListParam } from "../params";
import { ATTRIBUTE_PARAMS, exactColumnFilters, exactColumnParams } from "./column-params";
import { answerListing } from "./listing";
import { resolveInsightsScope } from "./scope";

/** The parameters that match one column of the event exactly, by their wire names. */
const COLUMN_PARAMS = { path: "path", ...ATTRIBUTE_PARAMS } as const;

const PropertiesParam = v.optional(
  v.pipe(
    v.string(),
    v.description(
      'URL-encoded JSON object of property keys and texts, e.g. `{"plan":"pro"}`: each property\'s value text must equal its string (nested keys dotted).',
    ),
    v.parseJson(undefined, "properties must be a JSON object of strings"),
    v.check(
      (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      "properties must be a JSON object of strings",
    ),
    v.record(
      v.pipe(v.string(), v.minLength(1, "a property key must not be empty")),
      v.string("each property value must be a string"),
      "properties must be a JSON object of strings",
    ),
  ),
);

const EventsQuery = v.object({
  ...RangeParams,
  eventNames: v.optional(
    StringListParam("eventNames", "Only events with one of these names (repeat the key, or a JSON array)."),
  ),
  ...exactColumnParams(COLUMN_PARAMS, "events"),
  properties: PropertiesParam,
  limit: LimitParam(20, 100),
  cursor: CursorParam,
});

export const eventListing = new Hono<AppEnv>().get(
  "/:projectId/events",
  describeRoute({
    operationId: "listEvents",
    tags: ["Listings"],
    summary: "Events, newest first",
    description:
      "The project's events of the window (default `30d`) that pass every filter, by `created_at` then `id`, both descending. The column parameters match the event's own column exactly; `filters` are event-scoped. Paged by keyset: `Link`/`X-Next-Cursor` lead to the next page, and pages never shift when events arrive.",
    responses: cachedAnswerResponses({
      description: "Event rows",
      schema: v.array(EventRowSchema),
      headers: LIST_RESPONSE_HEADERS,
    }),
  }),
  validate("query", EventsQuery),
  async (c) => {
    const query = c.req.valid("query");
    const project = c.get("project");
    const exact = exactColumnFilters(COLUMN_PARAMS, query);
    const byProperty: RawFilter[] = Object.entries(query.properties ?? {}).map(([key, value]) => ({
      name: `${PROPERTY_PREFIX}${key}`,
      operator: "is" as const,
      value: [value],
    }));
    const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
    const names = query.eventNames ?? [];
    const filters = [...scope.filters, ...normalizeFilters([...exact, ...byProperty])];
    const window = scope.range.window;
    return answerListing(c, {
      route: "events",
      scope,
      filters,
      inputs: { names, exact, byProperty },
      limit: query.limit,
      cursor: query.cursor,
      read: (db, page) =>
        listEvents(db, { projectId: project.id, start: window.start, end: window.end, names, filters }, page),
    });
  },
);
