import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { BREAKDOWN_DIMENSIONS, isBreakdownDimension } from "../../lib/dimensions";
import { ApiError } from "../../lib/errors";
import { validate } from "../../middleware/validate";
import { sessionBreakdown } from "../../queries/insights/breakdowns";
import { BreakdownRowSchema } from "../../schemas/insights";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { answerList, ListQuery } from "./list";

const DimensionParams = v.object({
  projectId: v.string(),
  dimension: v.pipe(v.picklist(BREAKDOWN_DIMENSIONS), v.description("The session attribute to group by.")),
});

export const breakdown = new Hono<AppEnv>().get(
  "/:projectId/:dimension",
  describeRoute({
    operationId: "listBreakdown",
    tags: ["Insights"],
    summary: "Sessions by a dimension",
    description:
      "Sessions of the window grouped by one attribute of their first event: traffic source, geography, device and technology, or a UTM parameter. Sorted by sessions (desc), then name, then prefix; paged like /pages. Any other dimension is 404.",
    responses: cachedAnswerResponses({
      description: "Breakdown rows",
      schema: v.array(BreakdownRowSchema),
      headers: LIST_RESPONSE_HEADERS,
      more: ["NOT_FOUND"],
    }),
  }),
  async (c, next) => {
    // An unknown dimension is an unknown path, not a bad parameter.
    if (!isBreakdownDimension(c.req.param("dimension") ?? "")) {
      throw new ApiError({ code: "NOT_FOUND", detail: `No endpoint at ${new URL(c.req.url).pathname}.` });
    }
    await next();
  },
  validate("param", DimensionParams),
  validate("query", ListQuery),
  (c) => {
    const { dimension } = c.req.valid("param");
    return answerList(c, dimension, c.req.valid("query"), (db, scope, page) =>
      sessionBreakdown(db, scope, dimension, page),
    );
  },
);
