import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

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

export const EXPOSED_HEADERS = [
  "Link",
  "X-Next-Cursor",
  "X-Request-Id",
  "ETag",
  "Cache-Status",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "Retry-After",
  "X-Window-Start",
  "X-Window-End",
  "X-Timezone",
  "Content-Disposition",
];

/** CORS for browser apps; origins come from CORS_ORIGINS (comma-separated, or `*`). */
export const corsForBrowserApps: MiddlewareHandler<AppEnv> = (c, next) => {
  const configured = (c.env.CORS_ORIGINS ?? "*").trim() || "*";
  const origins = configured === "*" ? "*" : configured.split(",").map((origin) => origin.trim());
  return cors({
    origin: origins,
    allowMethods: ["GET", "HEAD", "OPTIONS"],
    allowHeaders: [
      "openpanel-client-id",
      "openpanel-client-secret",
      "authorization",
      "content-type",
      "if-none-match",
      "cache-control",
      "accept",
    ],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
  })(c, next);
};
