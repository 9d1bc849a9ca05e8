import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";
import { openAPIRouteHandler } from "hono-openapi";
import type { AppEnv } from "../env";

const DESCRIPTION = `Read-only analytics API: metrics, live visitors, pages, breakdowns and event export for one
project. Wire-compatible with OpenPanel's public read API.

Authenticate with the headers \`openpanel-client-id\` and \`openpanel-client-secret\`, or HTTP Basic
auth with the id and secret. Every error is \`application/problem+json\` (RFC 9457).`;

/** `/openapi.json` and `/docs`; both describe `app`, the fully wired service. */
export function reference(app: Hono<AppEnv>) {
  return new Hono<AppEnv>()
    .get(
      "/openapi.json",
      openAPIRouteHandler(app, {
        documentation: {
          openapi: "3.1.0",
          info: { title: "Analytics read API", version: "1.0.0", description: DESCRIPTION },
          components: {
            securitySchemes: {
              clientId: { type: "apiKey", in: "header", name: "openpanel-client-id" },
              clientSecret: { type: "apiKey", in: "header", name: "openpanel-client-secret" },
              basic: { type: "http", scheme: "basic" },
            },
          },
          security: [{ clientId: [], clientSecret: [] }, { basic: [] }],
          tags: [
            { name: "Insights", description: "Aggregated numbers for one project." },
            { name: "Export", description: "Raw events and chart series." },
            { name: "Service", description: "Health and documentation; no authentication." },
          ],
        },
        defaultValidationErrorResponse: {
          description: "A parameter is invalid; `errors` points at it.",
          content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
        },
      }),
    )
    .get("/docs", Scalar({ url: "/openapi.json", pageTitle: "Analytics read API" }));
}
