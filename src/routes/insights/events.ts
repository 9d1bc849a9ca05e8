import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { cursorSecret, decodeListingCursor, encodeListingCursor, queryFingerprint } from "../../lib/cursors";
import { normalizeFilters, type RawFilter } from "../../lib/filter-parser";
import { nextPageHeaders } from "../../lib/paging";
import { cacheKey, freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import { assertValidRegexes } from "../../queries/filter-conditions";
import { listEvents } from "../../queries/listings/events";
import { EventRowSchema } from "../../schemas/listings";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { CursorParam, LimitParam, RangeParams, StringListParam } from "../params";
import { resolveInsightsScope, windowHeaders } from "./scope";

/** The parameters that match one column of the event exactly, by their wire names. */
const COLUMN_PARAMS = {
  path: "path",
  country: "country",
  city: "city",
  device: "device",
  browser: "browser",
  os: "os",
  referrer: "referrer",
  referrerName: "referrer_name",
  referrerType: "referrer_type",
  profileId: "profile_id",
} as const;

const exactColumn = (column: string) =>
  v.optional(v.pipe(v.string(), v.description(`Only events whose \`${column}\` is exactly this.`)));

/** One optional text parameter per column parameter, typed by its name. */
function exactColumnParams<T extends Record<string, string>>(
  columns: T,
): { [K in keyof T]: ReturnType<typeof exactColumn> } {
  const entries = Object.entries(columns).map(([param, column]) => [param, exactColumn(column)]);
  return Object.fromEntries(entries) as { [K in keyof T]: ReturnType<typeof exactColumn> };
}

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
  ...exactColumnParams(COLUMN_PARAMS),
  properties: PropertiesParam,
  limit: LimitParam(20, 100),
  cursor: CursorParam,
});

export const eventListing = new Hono<AppEnv>().get(
  "/:projectId/events",
  describeRoute({
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
    const exact: RawFilter[] = Object.entries(COLUMN_PARAMS).flatMap(([param, column]) => {
      const value = query[param as keyof typeof COLUMN_PARAMS];
      return value === undefined ? [] : [{ name: column, operator: "is" as const, value: [value] }];
    });
    const byProperty: RawFilter[] = Object.entries(query.properties ?? {}).map(([key, value]) => ({
      name: `properties.${key}`,
      operator: "is" as const,
      value: [value],
    }));
    const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
    const names = query.eventNames ?? [];
    const filters = [...scope.filters, ...normalizeFilters([...exact, ...byProperty])];
    const fingerprint = await queryFingerprint({
      route: "events",
      project: project.id,
      ...scope.fingerprint,
      names,
      exact,
      byProperty,
    });
    const secret = cursorSecret(c.env);
    const after = await decodeListingCursor(secret, query.cursor, fingerprint);
    const key = await cacheKey(project.id, "events", {
      fingerprint,
      after: after ?? null,
      limit: query.limit,
    });
    const answer = await readThrough(c, key, freshnessFor(scope.range), async () => {
      const db = useDatabase(c);
      await assertValidRegexes(db, filters);
      const window = scope.range.window;
      const rows = await listEvents(
        db,
        { projectId: project.id, start: window.start, end: window.end, names, filters },
        { limit: query.limit + 1, after },
      );
      return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    });
    const last = answer.value.rows.at(-1);
    const next =
      answer.value.hasMore && last
        ? await encodeListingCursor(secret, last.position, fingerprint)
        : undefined;
    return sendJson(c, {
      body: answer.value.rows.map(({ position: _position, ...row }) => row),
      freshFor: answer.freshFor,
      cacheStatus: answer.cacheStatus,
      headers: { ...nextPageHeaders(c.req.url, next), ...windowHeaders(scope.range) },
    });
  },
);
