import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";
import { NUL_MESSAGE } from "../lib/validation";

/**
 * A URL whose path or query holds an encoded NUL character (`%00`) is a 400 before anything reads
 * it: the path's project id and every query value end up as Postgres text, which cannot hold one.
 * (NUL escaped inside a JSON parameter is caught by the validator, src/middleware/validate.ts.)
 */
export const rejectNulCharacters: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = new URL(c.req.url);
  // The URL parser percent-encodes a raw NUL, so `%00` is the one form to look for.
  const part = /%00/.test(url.pathname) ? "path" : /%00/.test(url.search) ? "query" : undefined;
  if (part !== undefined) throw ApiError.invalid(part, NUL_MESSAGE);
  await next();
};
