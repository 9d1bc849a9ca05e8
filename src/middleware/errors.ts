import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError, classifyDatabaseError, problemDocument } from "../lib/errors";

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
