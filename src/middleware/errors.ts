import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError, classifyDatabaseError, ERROR_CODES, problemType } from "../lib/errors";
import { type FailureContext, logFailure } from "../lib/failure-log";
import type { ProblemDocument } from "../schemas/problem";

/** The RFC 9457 document of an error; OpenPanel clients read `error` and `message`. */
export function problemDocument(error: ApiError, requestId: string): ProblemDocument {
  const { title } = ERROR_CODES[error.code];
  return {
    type: problemType(error.code),
    title,
    status: error.status,
    detail: error.message,
    code: error.code,
    requestId,
    errors: error.errors,
    error: title,
    message: error.message,
    ...(error.profileId === undefined ? {} : { profileId: error.profileId }),
  };
}

/** The one place errors become responses: every failure is rendered here as problem+json. */
export function renderProblem(c: Context<AppEnv>, error: ApiError): Response {
  const body = problemDocument(error, c.get("requestId") ?? "");
  return c.body(JSON.stringify(body), error.status, {
    ...error.headers,
    "Content-Type": "application/problem+json",
    "Cache-Control": "no-store",
  });
}

/** The request as a log line may name it: its id, method and route pattern (no raw URL). */
function failureContext(c: Context<AppEnv>, event: string, status: number): FailureContext {
  return { event, requestId: c.get("requestId"), method: c.req.method, route: c.req.routePath, status };
}

export const handleError: ErrorHandler<AppEnv> = (error, c) => {
  const mapped = error instanceof ApiError ? error : classifyDatabaseError(error);
  if (mapped) {
    // A 503 is the database's doing: one line with its SQLSTATE, so operators see the cause.
    if (mapped.status === 503) {
      logFailure("warn", failureContext(c, mapped.code.toLowerCase(), 503), mapped.cause ?? error);
    }
    return renderProblem(c, mapped);
  }
  // The log keeps what operators need, without SQL or request bytes; the response shows neither.
  logFailure("error", failureContext(c, "unhandled_error", 500), error);
  return renderProblem(c, ApiError.internal());
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) =>
  renderProblem(
    c,
    new ApiError({ code: "NOT_FOUND", detail: `No endpoint at ${new URL(c.req.url).pathname}.` }),
  );
