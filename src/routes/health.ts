import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../env";
import { classifyDatabaseError } from "../lib/errors";
import { logFailure } from "../lib/failure-log";
import { useDatabase } from "../middleware/database";
import { pingDatabase } from "../queries/health";
import { jsonContent } from "./openapi";

const HealthSchema = v.object({
  status: v.picklist(["ok", "degraded"]),
  database: v.picklist(["ok", "unreachable"]),
});

export const health = new Hono<AppEnv>().get(
  "/health",
  describeRoute({
    tags: ["Service"],
    summary: "Service and database health",
    description: "No authentication. Queries the database; 503 when it cannot be reached.",
    responses: {
      200: { description: "Healthy", content: jsonContent(HealthSchema) },
      503: { description: "The database is unreachable", content: jsonContent(HealthSchema) },
    },
  }),
  async (c) => {
    c.header("Cache-Control", "no-store");
    try {
      await pingDatabase(useDatabase(c));
      return c.json({ status: "ok", database: "ok" } as const, 200);
    } catch (error) {
      const unavailable = classifyDatabaseError(error) !== undefined;
      logFailure(
        unavailable ? "warn" : "error",
        {
          event: unavailable ? "database_unavailable" : "health_check_failed",
          requestId: c.get("requestId"),
        },
        error,
      );
      return c.json({ status: "degraded", database: "unreachable" } as const, 503, { "Retry-After": "5" });
    }
  },
);
