import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";
import { type GenerateSpecOptions, generateSpecs } from "hono-openapi";
import packageJson from "../../package.json";
import type { AppEnv } from "../env";
import { typeQueryParameters } from "./openapi-parameters";

/**
 * The pinned `/docs` renderer: the version of @scalar/api-reference in package-lock.json, copied
 * into the Worker's static assets by `npm run build:assets`, so `/docs` needs no CDN and does not
 * change under its readers.
 */
export const DOCS_RENDERER_PATH = "/docs/scalar-api-reference.js";

const DESCRIPTION = `Read-only analytics API: metrics, live visitors, pages, breakdowns and event export for one
project. Wire-compatible with OpenPanel's public read API.

Authenticate with the headers \`openpanel-client-id\` and \`openpanel-client-secret\`, or HTTP Basic
auth with the id and secret. Every error is \`application/problem+json\` (RFC 9457); its \`type\`
links to its entry on [the errors page](/docs/errors).`;

/** `/openapi.json` and `/docs`; both describe `app`, the fully wired service. */
export function reference(app: Hono<AppEnv>) {
  const options: Partial<GenerateSpecOptions> = {
    documentation: {
      openapi: "3.1.0",
      info: {
        title: "Analytics read API",
        version: packageJson.version,
        description: DESCRIPTION,
        license: { name: packageJson.license },
      },
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
  };
  // The document depends only on the code; each isolate builds it once.
  let document: ReturnType<typeof typeQueryParameters> | undefined;
  return new Hono<AppEnv>()
    .get("/openapi.json", async (c) => {
      document ??= typeQueryParameters(await generateSpecs(app, options, c));
      // The server is the one that served the document (the deployed Worker, or `wrangler dev`).
      return c.json({ ...document, servers: [{ url: new URL(c.req.url).origin }] });
    })
    .get(
      "/docs",
      Scalar({
        url: "/openapi.json",
        pageTitle: "Analytics read API",
        cdn: DOCS_RENDERER_PATH,
        // Nothing leaves the page: no web fonts, no telemetry, no hosted AI chat or MCP generator.
        withDefaultFonts: false,
        telemetry: false,
        agent: { disabled: true },
        mcp: { disabled: true },
      }),
    );
}
