/**
 * What a database failure is, read from the driver's error and the causes it wraps: the one
 * place that knows SQLSTATEs and connection-failure shapes. The API maps them to responses
 * (src/lib/errors.ts); the pool retries the retryable ones (src/db/client.ts).
 */

// Connection failures (class 08), shut down or restarting (57P0x), out of connections or
// resources (53xxx), or refusing connections, e.g. a database with connections disallowed (55000).
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "53000",
  "53100",
  "53200",
  "53300",
  "53400",
  "55000",
]);
const SOCKET_ERRORS = new Set(["ECONNREFUSED", "ETIMEDOUT", "ENOTFOUND", "ECONNRESET", "EPIPE"]);
const SQLSTATE = /^[0-9A-Z]{5}$/;
/** SQLSTATE of a statement cancelled by `statement_timeout`. */
export const QUERY_CANCELED = "57014";

/** An error and the causes it wraps, outermost first (drizzle wraps the driver's error in its own). */
export function* causeChain(error: unknown): Generator<object> {
  let current = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    yield current;
    current = "cause" in current ? current.cause : undefined;
  }
}

/** The first Postgres error in the chain: its SQLSTATE and message. */
export function postgresError(error: unknown): { code: string; message: string } | undefined {
  for (const link of causeChain(error)) {
    if ("code" in link && typeof link.code === "string" && SQLSTATE.test(link.code)) {
      return { code: link.code, message: link instanceof Error ? link.message : "" };
    }
  }
  return undefined;
}

/** The code of one link of a chain ("" without one). */
export function errorCode(error: object): string {
  return "code" in error && typeof error.code === "string" ? error.code : "";
}

/** Whether one link of a chain says the database could not be reached or refused the work. */
export function isUnavailableLink(error: object): boolean {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : "";
  return (
    code.startsWith("08") ||
    UNAVAILABLE_SQLSTATES.has(code) ||
    SOCKET_ERRORS.has(code) ||
    /websocket|connection (terminated|refused|closed)|connect failed|network/i.test(message) ||
    (typeof Event !== "undefined" && error instanceof Event)
  );
}

/**
 * Whether a failure is worth one more try on a fresh connection: the database was unavailable
 * (a pooled session that had died, a restart, a full connection table), not a timeout or an
 * error of the query itself.
 */
export function isRetryableFailure(error: unknown): boolean {
  for (const link of causeChain(error)) {
    if (errorCode(link) === QUERY_CANCELED) return false;
    if (isUnavailableLink(link)) return true;
  }
  return false;
}
