import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";
import { NUL_MESSAGE } from "../lib/validation";

/**
 * The longest URL answered: the parameters of any real dashboard or chart fit in it, and a longer
 * one is refused before it is parsed or authenticated. Half of what the platform takes (16 KB of
 * request line and headers, beyond which it answers a bare 414 or 431 itself), so a long URL
 * with ordinary headers gets this service's problem+json instead.
 */
export const MAX_URL_LENGTH = 8_192;

/**
 * Checks on the raw request before anything reads it: its URL's length (414 beyond
 * MAX_URL_LENGTH) and encoded NUL characters (`%00`) in its path or query, a 400: the path's
 * project id and every query value end up as Postgres text, which cannot hold one. (NUL escaped
 * inside a JSON parameter is caught by the validator, src/lib/validation.ts.)
 */
export const checkRequestShape: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.url.length > MAX_URL_LENGTH) {
    throw new ApiError({
      code: "URI_TOO_LONG",
      detail: `The URL is ${c.req.url.length} characters long; at most ${MAX_URL_LENGTH} are answered. Narrow the filters.`,
    });
  }
  const url = new URL(c.req.url);
  // The URL parser percent-encodes a raw NUL, so `%00` is the one form to look for.
  const part = /%00/.test(url.pathname) ? "path" : /%00/.test(url.search) ? "query" : undefined;
  if (part !== undefined) throw ApiError.invalid(part, NUL_MESSAGE);
  await next();
};
