import { postgresError } from "../db/connection-errors";

/** Where a failure happened: the request and the route pattern, never the raw URL. */
export interface FailureContext {
  /** What failed, e.g. `unhandled_error`, `database_unavailable`, `export_stream_failed`. */
  event: string;
  requestId?: string;
  method?: string;
  /** The matched route pattern (`/insights/:projectId/metrics`), which holds no request bytes. */
  route?: string;
  status?: number;
}

const STACK_FRAMES = 6;
/** Errors of the code itself, whose messages are written by the runtime, not by a caller. */
const PROGRAMMING_ERRORS = new Set(["TypeError", "RangeError", "ReferenceError", "SyntaxError"]);

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/**
 * One structured log line for an operator: the SQLSTATE, the error's class and where it was
 * thrown. Never SQL text, bound parameters, driver messages or connection strings (a driver error
 * repeats the whole query and its values, which came from the request); a programming error's
 * message is kept (cut at 300 characters), since the runtime wrote it.
 */
export function failureLogLine(context: FailureContext, error: unknown): string {
  const name = errorName(error);
  const frames =
    error instanceof Error && error.stack
      ? error.stack
          .split("\n")
          .filter((line) => line.trimStart().startsWith("at "))
          .slice(0, STACK_FRAMES)
          .map((line) => line.trim())
      : [];
  const sqlstate = postgresError(error)?.code;
  // JSON escapes any control character in it.
  const message =
    error instanceof Error && PROGRAMMING_ERRORS.has(name) && sqlstate === undefined
      ? error.message.slice(0, 300)
      : undefined;
  return JSON.stringify({ ...context, sqlstate, error: name, message, frames });
}

export function logFailure(level: "warn" | "error", context: FailureContext, error: unknown): void {
  const line = failureLogLine(context, error);
  if (level === "warn") console.warn(line);
  else console.error(line);
}
