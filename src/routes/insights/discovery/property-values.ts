import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { EVENT_COLUMNS } from "../../../lib/dimensions";
import { ApiError } from "../../../lib/errors";
import { PROPERTY_PREFIX } from "../../../lib/filter-parser";
import { nextPageHeaders } from "../../../lib/paging";
import { readThrough } from "../../../middleware/cache";
import { useDatabase } from "../../../middleware/database";
import { sendJson } from "../../../middleware/send-json";
import { validate } from "../../../middleware/validate";
import { LISTED_VALUES, propertyValues } from "../../../queries/discovery/values";
import { type PropertyValuesBody, PropertyValuesResponse } from "../../../schemas/discovery";
import { cachedAnswerResponses, header, LIST_RESPONSE_HEADERS } from "../../openapi";
import { CursorParam, FlagParam, LimitParam } from "../../params";
import { offsetPage } from "../offset-page";
import { DISCOVERY_FRESH_SECONDS } from "./names";
import { DiscoveryParams, EventNameParams, requestedEventName } from "./params";

const KEY_DESCRIPTION =
  "A column name (`country`, `referrer_name`…) names the column; `properties.<key>` or any other `<key>` names that property (write `properties.country` for a property that shares a column's name). Required.";

const ValuesQuery = v.object({
  ...DiscoveryParams,
  ...EventNameParams,
  propertyKey: v.optional(v.pipe(v.string(), v.minLength(1), v.description(KEY_DESCRIPTION))),
  property: v.optional(v.pipe(v.string(), v.minLength(1), v.description("Alias of `propertyKey`."))),
  q: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, "q is at most 200 characters"),
      v.description("Case-insensitive literal substring of the value text."),
    ),
  ),
  limit: LimitParam(200),
  cursor: CursorParam,
  counts: v.optional(FlagParam("counts", "Also return each value's number of events."), "false"),
});

/** The catalogue key a `propertyKey` names: a column by its name, anything else a property. */
function catalogueKey(propertyKey: string): string {
  if ((EVENT_COLUMNS as readonly string[]).includes(propertyKey)) return propertyKey;
  return propertyKey.startsWith(PROPERTY_PREFIX) ? propertyKey : `${PROPERTY_PREFIX}${propertyKey}`;
}

export const propertyValuesRoute = new Hono<AppEnv>().get(
  "/:projectId/events/property_values",
  describeRoute({
    operationId: "listPropertyValues",
    tags: ["Discovery"],
    summary: "The most frequent values of a column or property",
    description: `The distinct set values of the key (of \`eventName\`'s events, or of all), by the number of events carrying them over the whole history, then text; \`counts=true\` adds those numbers. The list holds at most the ${LISTED_VALUES} most frequent values (\`X-Values-Capped: ${LISTED_VALUES}\` when the key has more), paged by \`limit\`/\`cursor\`; \`X-Total-Count\` is its length. A key no stored event sets, or an event name never stored, is a 400.`,
    responses: cachedAnswerResponses({
      description: "Values",
      schema: PropertyValuesResponse,
      headers: {
        ...LIST_RESPONSE_HEADERS,
        "X-Total-Count": header("Values in the list (at most 1000)."),
        "X-Values-Capped": header("`1000` when the key has more distinct values than the list holds."),
      },
    }),
  }),
  validate("query", ValuesQuery),
  async (c) => {
    const query = c.req.valid("query");
    const projectId = c.get("project").id;
    const propertyKey = query.propertyKey ?? query.property;
    if (propertyKey === undefined) throw ApiError.invalid("propertyKey", "propertyKey is required");
    const param = query.propertyKey === undefined ? "property" : "propertyKey";
    const eventName = await requestedEventName(c, query);
    const key = catalogueKey(propertyKey);
    const search = query.q === "" ? undefined : query.q;
    const {
      page,
      cacheKey: cached,
      next: nextCursor,
    } = await offsetPage(c, "events/property_values", { key, eventName, search }, query);
    const answer = await readThrough(c, cached, DISCOVERY_FRESH_SECONDS, () =>
      propertyValues(useDatabase(c), { projectId, key, eventName, search, page }),
    );
    const { known, total, capped, values } = answer.value;
    if (!known) {
      const scope = eventName === undefined ? "" : ` on ${JSON.stringify(eventName)} events`;
      throw ApiError.invalid(param, `${param}: no stored event${scope} sets ${JSON.stringify(propertyKey)}`);
    }
    const shown = values.slice(0, page.limit);
    const next = await nextCursor(values.length > page.limit);
    const body: PropertyValuesBody = {
      event: eventName ?? null,
      property: propertyKey,
      values: shown.map((item) => item.value),
      ...(query.counts === "true" ? { counts: shown } : {}),
    };
    return sendJson(c, {
      body,
      freshFor: answer.freshFor,
      cacheStatus: answer.cacheStatus,
      headers: {
        ...nextPageHeaders(c.req.url, next),
        "X-Total-Count": String(total),
        ...(capped ? { "X-Values-Capped": String(LISTED_VALUES) } : {}),
      },
    });
  },
);
