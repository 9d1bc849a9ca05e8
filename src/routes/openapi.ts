import { resolver } from "hono-openapi";
import { ERROR_CODES, type ErrorCode } from "../lib/errors";
import { ProblemSchema } from "../schemas/problem";

const problemContent = { "application/problem+json": { schema: resolver(ProblemSchema) } };

/** OpenAPI `responses` entries for the problems a route can answer with, keyed by status. */
export function problemResponses(...codes: ErrorCode[]) {
  const byStatus: Record<string, { description: string; content: typeof problemContent }> = {};
  for (const code of codes) {
    const status = String(ERROR_CODES[code].status);
    const description = ERROR_CODES[code].meaning;
    const existing = byStatus[status];
    byStatus[status] = {
      description: existing ? `${existing.description} ${description}` : description,
      content: problemContent,
    };
  }
  return byStatus;
}

/** The problems every authenticated project route can answer with. */
export const PROJECT_ROUTE_PROBLEMS = [
  "VALIDATION_FAILED",
  "UNAUTHENTICATED",
  "CLIENT_TYPE_FORBIDDEN",
  "PROJECT_NOT_FOUND",
  "URI_TOO_LONG",
  "RATE_LIMITED",
  "DATABASE_UNAVAILABLE",
  "QUERY_TIMEOUT",
] as const satisfies ErrorCode[];

export const jsonContent = <S extends Parameters<typeof resolver>[0]>(schema: S) => ({
  "application/json": { schema: resolver(schema) },
});

export const header = (description: string) => ({ description, schema: { type: "string" as const } });

/** Headers of every cached JSON answer (contract section 9). */
export const CACHED_RESPONSE_HEADERS = {
  ETag: header("Entity tag of the body; send it back in If-None-Match to get 304."),
  "Cache-Status": header(
    "RFC 9211: `analytics-kv; hit; ttl=N` (`; detail=memory` when this isolate answered from its own copy), or `fwd=miss|stale|request; stored`.",
  ),
  "Cache-Control": header("`private, max-age=<seconds the answer stays fresh>`."),
  "X-Request-Id": header("Identifies the request in logs and problem documents."),
};

/** Headers of the ranked insights lists: the next page and the resolved window (the body is an array). */
export const LIST_RESPONSE_HEADERS = {
  ...CACHED_RESPONSE_HEADERS,
  Link: header('`<url of the next page>; rel="next"`; absent on the last page.'),
  "X-Next-Cursor": header("Cursor of the next page; absent on the last page."),
  "X-Window-Start": header("Start of the resolved window, RFC 3339 in `X-Timezone`."),
  "X-Requested-Window-Start": header(
    "Only when a window longer than 2 years was clamped to the project's history: the start asked for.",
  ),
  "X-Window-End": header("Last included millisecond of the window, RFC 3339 in `X-Timezone`."),
  "X-Timezone": header("The timezone the window and buckets were resolved in."),
};

/**
 * The responses of a project route's cached JSON answer: 200 with its schema and headers, 304 for
 * a matching If-None-Match, and the problems every project route can answer with (and `more`).
 */
export function cachedAnswerResponses<S extends Parameters<typeof resolver>[0]>(options: {
  description: string;
  schema: S;
  headers?: Record<string, { description: string; schema: { type: "string" } }>;
  more?: ErrorCode[];
}) {
  return {
    200: {
      description: options.description,
      ...(options.headers ? { headers: options.headers } : {}),
      content: jsonContent(options.schema),
    },
    304: { description: "Not modified (If-None-Match matched the ETag)" },
    ...problemResponses(...PROJECT_ROUTE_PROBLEMS, ...(options.more ?? [])),
  };
}
