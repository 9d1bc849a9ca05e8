import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";

const READ_METHODS = new Set(["GET", "HEAD"]);

/**
 * The API is read-only: every other method is a 405 with `Allow`, before authentication, so a
 * client learns the method is wrong rather than that its credentials are. CORS preflights
 * (OPTIONS with Access-Control-Request-Method) pass through to the CORS middleware.
 */
export const readOnlyMethods: MiddlewareHandler<AppEnv> = async (c, next) => {
  const method = c.req.method;
  const preflight = method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined;
  if (!READ_METHODS.has(method) && !preflight) {
    throw new ApiError({
      code: "METHOD_NOT_ALLOWED",
      detail: `${method} is not supported. This API is read-only: use GET or HEAD.`,
      headers: { Allow: "GET, HEAD" },
    });
  }
  await next();
};
