import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { useDatabase } from "../../lib/database";
import { jsonContent, PROJECT_ROUTE_PROBLEMS, problemResponses } from "../../lib/openapi";
import { validate } from "../../lib/validation";
import { liveVisitors } from "../../queries/live";

const LiveQuery = v.object({
  minutes: v.optional(
    v.pipe(
      v.string(),
      v.toNumber(),
      v.integer("minutes must be a whole number"),
      v.minValue(1, "minutes must be between 1 and 60"),
      v.maxValue(60, "minutes must be between 1 and 60"),
      v.description("Look-back window in minutes (1–60)."),
    ),
    "5",
  ),
});

const LiveSchema = v.object({
  visitors: v.pipe(v.number(), v.description("Distinct visitors with any event in the window.")),
});

export const live = new Hono<AppEnv>().get(
  "/:projectId/live",
  describeRoute({
    tags: ["Insights"],
    summary: "Live visitors",
    description: "Distinct visitors with any event in the last `minutes` minutes (default 5).",
    responses: {
      200: { description: "Visitor count", content: jsonContent(LiveSchema) },
      ...problemResponses(...PROJECT_ROUTE_PROBLEMS),
    },
  }),
  validate("query", LiveQuery),
  async (c) => {
    const { minutes } = c.req.valid("query");
    const visitors = await liveVisitors(useDatabase(c), c.get("project").id, minutes, new Date());
    return c.json({ visitors });
  },
);
