import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../env";

export const EXPOSED_HEADERS = [
  "Link",
  "X-Next-Cursor",
  "X-Request-Id",
  "ETag",
  "Cache-Status",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "RateLimit",
  "RateLimit-Policy",
  "Server-Timing",
  "Retry-After",
  "X-Window-Start",
  "X-Requested-Window-Start",
  "X-Total-Count",
  "X-Values-Capped",
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
