import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { EVENT_COLUMNS } from "../../../lib/dimensions";
import { cacheKey, readThrough } from "../../../middleware/cache";
import { useDatabase } from "../../../middleware/database";
import { sendJson } from "../../../middleware/send-json";
import { validate } from "../../../middleware/validate";
import { eventProperties } from "../../../queries/discovery/properties";
import { type EventPropertiesBody, EventPropertiesResponse } from "../../../schemas/discovery";
import { CACHED_RESPONSE_HEADERS, cachedAnswerResponses } from "../../openapi";
import { DISCOVERY_FRESH_SECONDS } from "./names";
import { DiscoveryParams, EventNameParams, requestedEventName } from "./params";

const PropertiesQuery = v.object({ ...DiscoveryParams, ...EventNameParams });

export const eventPropertiesRoute = new Hono<AppEnv>().get(
  "/:projectId/events/properties",
  describeRoute({
    operationId: "listEventProperties",
    tags: ["Discovery"],
    summary: "Columns and property keys",
    description:
      "`columns`: the top-level event columns, always all of them. `properties`: every (property key, event name) pair some stored event sets (keys flattened: `a.b`, `items.0.sku`), by key then name; only that event's with `eventName` (a name never stored is a 400). Nothing is capped.",
    responses: cachedAnswerResponses({
      description: "Columns and property keys",
      schema: EventPropertiesResponse,
      headers: CACHED_RESPONSE_HEADERS,
    }),
  }),
  validate("query", PropertiesQuery),
  async (c) => {
    const projectId = c.get("project").id;
    const eventName = await requestedEventName(c, c.req.valid("query"));
    const key = await cacheKey(projectId, "events/properties", { eventName: eventName ?? null });
    const answer = await readThrough(
      c,
      key,
      DISCOVERY_FRESH_SECONDS,
      async (): Promise<EventPropertiesBody> => ({
        columns: [...EVENT_COLUMNS],
        properties: await eventProperties(useDatabase(c), projectId, eventName),
      }),
    );
    return sendJson(c, { ...answer, body: answer.value });
  },
);
