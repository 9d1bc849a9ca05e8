import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { AppEnv } from "../../../env";
import { cursorSecret } from "../../../lib/cursors";
import { negotiateExportFormat } from "../../../lib/export-format";
import { useDatabase } from "../../../middleware/database";
import { validate } from "../../../middleware/validate";
import { assertValidRegexes } from "../../../queries/filter-conditions";
import { EventPageSchema } from "../../../schemas/export-events";
import { jsonContent, PROJECT_ROUTE_PROBLEMS, problemResponses } from "../../openapi";
import { resolveScope, resolveStart } from "./request";
import { EventsQuery, streamContent } from "./schema";
import { answerPage, answerStream } from "./shaping";

export const events = new Hono<AppEnv>().get(
  "/events",
  describeRoute({
    operationId: "exportEvents",
    tags: ["Export"],
    summary: "Export raw events",
    description: `Events of one project, newest first (\`createdAt\` desc, then \`id\` desc).

**JSON pages** (default): \`{ meta: { count, limit, hasMore, next }, data }\`. Pass \`meta.next\` as
\`cursor\` for the next page: keyset paging, so every page costs the same however deep, and events
written after the first page never shift later pages. \`page\` (1-based offset paging) is kept for
OpenPanel clients; it and \`totalCount=true\` add \`totalCount\`, \`pages\` and \`current\`.
\`after=<event id>\` resumes right after that event. \`cursor\`, \`after\` and \`page\` exclude each other.

**Streams**: \`format=ndjson\` or \`format=csv\` (or \`Accept: application/x-ndjson\` / \`text/csv\`)
send every matching event (at most \`limit\` when it is given) in the same order as an attachment,
read in batches as the client consumes them. CSV has a header row (RFC 4180 quoting, CRLF line
ends); \`profile\`, \`meta\` and \`properties\` are JSON text in their cell; null is an empty cell, an
empty string \`""\`. A stream that fails after it started is cut off (the body ends incomplete, never
with an error document): resume with \`after=<id of the last complete record>\`.`,
    responses: {
      200: {
        description: "A page of events (JSON) or the whole selection (NDJSON, CSV)",
        content: {
          ...jsonContent(EventPageSchema),
          "application/x-ndjson": streamContent("One ExportedEvent JSON object per line."),
          "text/csv": streamContent("A header row, then one ExportedEvent per row."),
        },
      },
      304: { description: "Not modified (If-None-Match matched the ETag of a JSON page)" },
      ...problemResponses(...PROJECT_ROUTE_PROBLEMS),
    },
  }),
  validate("query", EventsQuery),
  async (c) => {
    const query = c.req.valid("query");
    const format = negotiateExportFormat(query.format, c.req.header("accept"));
    const projectId = c.get("project").id;
    const db = useDatabase(c);
    const scope = resolveScope(query, projectId);
    const request = {
      query,
      scope,
      includes: new Set(query.includes ?? []),
      start: await resolveStart(db, query, projectId, cursorSecret(c.env)),
    };
    await assertValidRegexes(db, scope.filters);
    return format === "json" ? answerPage(c, request) : answerStream(c, format, request);
  },
);
