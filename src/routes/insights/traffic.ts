import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import type { BreakdownDimension } from "../../lib/dimensions";
import { validate } from "../../middleware/validate";
import { sessionBreakdown } from "../../queries/insights/breakdowns";
import { BreakdownRowSchema } from "../../schemas/insights";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { CursorParam, LimitParam, OneOfParam, RangeParams } from "../params";
import { answerList } from "./list";

/** OpenPanel's `/traffic/*`: a breakdown chosen by `breakdown` among a group's dimensions, the first by default. */
const TRAFFIC_GROUPS = {
  referrers: [
    "referrer_name",
    "referrer_type",
    "referrer",
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
  ],
  geo: ["country", "region", "city"],
  devices: ["device", "browser", "os", "brand", "model", "browser_version", "os_version"],
} as const satisfies Record<string, readonly [BreakdownDimension, ...BreakdownDimension[]]>;

type TrafficGroup = keyof typeof TRAFFIC_GROUPS;

const SUMMARIES: Record<TrafficGroup, string> = {
  referrers: "Sessions by traffic source",
  geo: "Sessions by geography",
  devices: "Sessions by device and technology",
};

function trafficRoute(group: TrafficGroup) {
  const dimensions = TRAFFIC_GROUPS[group];
  const query = v.object({
    ...RangeParams,
    breakdown: v.optional(
      OneOfParam("breakdown", dimensions, `The dimension to group by (default \`${dimensions[0]}\`).`),
      dimensions[0],
    ),
    limit: LimitParam(1000),
    cursor: CursorParam,
  });
  return new Hono<AppEnv>().get(
    `/:projectId/traffic/${group}`,
    describeRoute({
      operationId: `list${group[0]?.toUpperCase()}${group.slice(1)}`,
      tags: ["Insights"],
      summary: SUMMARIES[group],
      description: `The rows, order and numbers of \`/{breakdown}\` for the same query, \`revenue\` included (OpenPanel's route). \`breakdown\`: ${dimensions.map((d) => `\`${d}\``).join(", ")}; any other is a 400.`,
      responses: cachedAnswerResponses({
        description: "Breakdown rows",
        schema: v.array(BreakdownRowSchema),
        headers: LIST_RESPONSE_HEADERS,
      }),
    }),
    validate("query", query),
    (c) => {
      const params = c.req.valid("query");
      return answerList(
        c,
        `traffic/${group}/${params.breakdown}`,
        params,
        (db, scope, page) => sessionBreakdown(db, scope, params.breakdown, page),
        "30d",
      );
    },
  );
}

export const traffic = new Hono<AppEnv>()
  .route("/", trafficRoute("referrers"))
  .route("/", trafficRoute("geo"))
  .route("/", trafficRoute("devices"));
