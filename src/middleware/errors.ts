import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError, classifyDatabaseError, ERROR_CODES } from "../lib/errors";
import type { ProblemDocument } from "../schemas/problem";

/** The RFC 9457 document of an error; OpenPanel clients read `error` and `message`. */
export function problemDocument(error: ApiError, requestId: string): ProblemDocument {
  const { title } = ERROR_CODES[error.code];
  return {
    type: `/docs#error-${error.code.toLowerCase()}`,
    title,
    status: error.status,
    detail: error.message,
    code: error.code,
    requestId,
    errors: error.errors,
    error: title,
    message: error.message,
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

export const handleError: ErrorHandler<AppEnv> = (error, c) => {
  if (error instanceof ApiError) return renderProblem(c, error);
  const mapped = classifyDatabaseError(error);
  if (mapped) return renderProblem(c, mapped);
  // The log keeps the detail for operators; the response never shows SQL, stacks or URLs.
  console.error(`[${c.get("requestId")}] unhandled error`, error);
  return renderProblem(
    c,
    new ApiError({
      code: "INTERNAL",
      detail: "Something went wrong on our side. The request id identifies it.",
    }),
  );
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) =>
  renderProblem(
    c,
    new ApiError({ code: "NOT_FOUND", detail: `No endpoint at ${new URL(c.req.url).pathname}.` }),
  );
