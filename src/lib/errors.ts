import { causeChain, errorCode, isUnavailableLink, QUERY_CANCELED } from "../db/connection-errors";

/**
 * Every error code the API answers with (contract section 8): its status and title, what it means
 * and what the caller can do. `/docs/errors` renders this table; each problem's `type` points at
 * its entry there (`problemType`).
 */
export const ERROR_CODES = {
  VALIDATION_FAILED: {
    status: 400,
    title: "Validation failed",
    meaning: "A parameter is invalid; `errors` points at it.",
    remedy:
      "Read `errors[].path` (`limit`, `filters/2/operator`…) and its message; fix that parameter and send the request again.",
  },
  UNAUTHENTICATED: {
    status: 401,
    title: "Unauthenticated",
    meaning: "Missing, malformed or wrong credentials.",
    remedy:
      "Send `openpanel-client-id` and `openpanel-client-secret` (or HTTP Basic auth) of a read or root client.",
  },
  CLIENT_TYPE_FORBIDDEN: {
    status: 403,
    title: "Client type forbidden",
    meaning: "Write clients cannot read.",
    remedy: "Use a read client of the project, or a root client of its organization.",
  },
  PROJECT_NOT_FOUND: {
    status: 404,
    title: "Project not found",
    meaning: "The project does not exist or this client cannot read it.",
    remedy:
      "Check the project id; a read client reads only its own project, a root client its organization's.",
  },
  NOT_FOUND: {
    status: 404,
    title: "Not found",
    meaning: "No such endpoint, or no such profile (then `profileId` names it).",
    remedy: "Check the path against /openapi.json, or the profile id.",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    title: "Method not allowed",
    meaning: "Only GET and HEAD are supported.",
    remedy: "The API is read-only: use GET (or HEAD); `Allow` lists the methods.",
  },
  URI_TOO_LONG: {
    status: 414,
    title: "URI too long",
    meaning: "The URL is longer than 8,192 characters.",
    remedy: "Send fewer or shorter filter values.",
  },
  RATE_LIMITED: {
    status: 429,
    title: "Rate limited",
    meaning: "Too many requests; see Retry-After.",
    remedy: "Wait the seconds `Retry-After` gives; `RateLimit` and `RateLimit-Policy` show the budget.",
  },
  INTERNAL: {
    status: 500,
    title: "Internal error",
    meaning: "Unexpected server error.",
    remedy: "Retry later; quote `requestId` when you report it.",
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    title: "Database unavailable",
    meaning: "The database is unreachable; see Retry-After.",
    remedy: "Retry after the seconds `Retry-After` gives.",
  },
  QUERY_TIMEOUT: {
    status: 503,
    title: "Query timeout",
    meaning: "The query exceeded its time budget.",
    remedy:
      "Narrow the date range or the filters, or retry: a repeated request may be answered from the cache.",
  },
} as const satisfies Record<string, { status: number; title: string; meaning: string; remedy: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The statuses the API answers errors with. */
export type ErrorStatus = (typeof ERROR_CODES)[ErrorCode]["status"];

/** The anchor of a code on the errors page: `VALIDATION_FAILED` → `validation-failed`. */
export const errorAnchor = (code: ErrorCode) => code.toLowerCase().replaceAll("_", "-");

/** The problem `type` of a code: its entry on the errors page (RFC 9457 section 3.1.1). */
export const problemType = (code: ErrorCode) => `/docs/errors#${errorAnchor(code)}`;

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
