import { resolver } from "hono-openapi";
import * as v from "valibot";
import { ERROR_CODES, type ErrorCode } from "./errors";

export const ProblemSchema = v.pipe(
  v.object({
    type: v.string(),
    title: v.string(),
    status: v.number(),
    detail: v.string(),
    code: v.picklist(Object.keys(ERROR_CODES) as ErrorCode[]),
    requestId: v.string(),
    errors: v.array(
      v.object({
        path: v.pipe(
          v.string(),
          v.description("Pointer to the offending parameter, e.g. `filters/2/operator`."),
        ),
        message: v.string(),
      }),
    ),
    error: v.pipe(v.string(), v.description("Same as `title` (OpenPanel compatibility).")),
    message: v.pipe(v.string(), v.description("Same as `detail` (OpenPanel compatibility).")),
  }),
  v.metadata({ ref: "Problem" }),
  v.description("RFC 9457 problem details."),
);

const problemContent = { "application/problem+json": { schema: resolver(ProblemSchema) } };

const DESCRIPTIONS: Record<ErrorCode, string> = {
  VALIDATION_FAILED: "A parameter is invalid; `errors` points at it.",
  UNAUTHENTICATED: "Missing, malformed or wrong credentials.",
  CLIENT_TYPE_FORBIDDEN: "Write clients cannot read.",
  PROJECT_NOT_FOUND: "The project does not exist or this client cannot read it.",
  NOT_FOUND: "No such endpoint.",
  METHOD_NOT_ALLOWED: "Only GET and HEAD are supported.",
  RATE_LIMITED: "Too many requests; see Retry-After.",
  INTERNAL: "Unexpected server error.",
  DATABASE_UNAVAILABLE: "The database is unreachable; see Retry-After.",
  QUERY_TIMEOUT: "The query exceeded its time budget.",
};

/** OpenAPI `responses` entries for the problems a route can answer with, keyed by status. */
export function problemResponses(...codes: ErrorCode[]) {
  const byStatus: Record<string, { description: string; content: typeof problemContent }> = {};
  for (const code of codes) {
    const status = String(ERROR_CODES[code].status);
    const description = DESCRIPTIONS[code];
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
  "RATE_LIMITED",
  "DATABASE_UNAVAILABLE",
  "QUERY_TIMEOUT",
] as const satisfies ErrorCode[];

export const jsonContent = <S extends Parameters<typeof resolver>[0]>(schema: S) => ({
  "application/json": { schema: resolver(schema) },
});
