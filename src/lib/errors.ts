import { causeChain, errorCode, isUnavailableLink, QUERY_CANCELED } from "../db/connection-errors";

/** Every error code the API answers with, and its status and title (contract section 8). */
export const ERROR_CODES = {
  VALIDATION_FAILED: { status: 400, title: "Validation failed" },
  UNAUTHENTICATED: { status: 401, title: "Unauthenticated" },
  CLIENT_TYPE_FORBIDDEN: { status: 403, title: "Client type forbidden" },
  PROJECT_NOT_FOUND: { status: 404, title: "Project not found" },
  NOT_FOUND: { status: 404, title: "Not found" },
  METHOD_NOT_ALLOWED: { status: 405, title: "Method not allowed" },
  URI_TOO_LONG: { status: 414, title: "URI too long" },
  RATE_LIMITED: { status: 429, title: "Rate limited" },
  INTERNAL: { status: 500, title: "Internal error" },
  DATABASE_UNAVAILABLE: { status: 503, title: "Database unavailable" },
  QUERY_TIMEOUT: { status: 503, title: "Query timeout" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The statuses the API answers errors with. */
export type ErrorStatus = (typeof ERROR_CODES)[ErrorCode]["status"];

export interface FieldError {
  /** Slash-separated pointer into the request, e.g. `limit` or `filters/2/operator`. */
  path: string;
  message: string;
}

export interface ApiErrorInit {
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** The profile a `Profile not found` problem names (contract A3). */
  profileId?: string;
  cause?: unknown;
}

/** The one error type of the service; `handleError` renders it as problem+json. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly errors: FieldError[];
  readonly headers: Record<string, string>;
  readonly profileId: string | undefined;

  constructor(init: ApiErrorInit) {
    super(init.detail, { cause: init.cause });
    this.name = "ApiError";
    this.code = init.code;
    this.status = ERROR_CODES[init.code].status;
    this.errors = init.errors ?? [];
    this.headers = init.headers ?? {};
    this.profileId = init.profileId;
  }

  /** A failure of ours, with nothing of its cause in the answer (the log has it). */
  static internal(): ApiError {
    return new ApiError({
      code: "INTERNAL",
      detail: "Something went wrong on our side. The request id identifies it.",
    });
  }

  /** The 404 of a profile id no stored event carries (contract A3). */
  static profileNotFound(profileId: string): ApiError {
    return new ApiError({ code: "NOT_FOUND", detail: "Profile not found", profileId });
  }

  /** A 400 for one bad parameter. */
  static invalid(path: string, message: string): ApiError {
    return new ApiError({ code: "VALIDATION_FAILED", detail: message, errors: [{ path, message }] });
  }
}

function classifyOne(error: object): ApiError | undefined {
  if (errorCode(error) === QUERY_CANCELED) {
    return new ApiError({
      code: "QUERY_TIMEOUT",
      detail: "The query took too long. Narrow the date range or the filters and try again.",
      headers: { "Retry-After": "5" },
      cause: error,
    });
  }
  if (isUnavailableLink(error)) {
    return new ApiError({
      code: "DATABASE_UNAVAILABLE",
      detail: "The database is unreachable right now. Try again shortly.",
      headers: { "Retry-After": "5" },
      cause: error,
    });
  }
  return undefined;
}

/**
 * Maps a database driver failure anywhere in the cause chain to the error the caller should see.
 * Only codes and message shapes are inspected; nothing of the original message reaches the response.
 */
export function classifyDatabaseError(error: unknown): ApiError | undefined {
  for (const link of causeChain(error)) {
    const mapped = classifyOne(link);
    if (mapped) return mapped;
  }
  return undefined;
}
