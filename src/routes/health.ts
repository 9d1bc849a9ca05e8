import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import journal from "../../drizzle/meta/_journal.json";
import { version } from "../../package.json";
import type { AppEnv } from "../env";
import { classifyDatabaseError } from "../lib/errors";
import { logFailure } from "../lib/failure-log";
import { useDatabase } from "../middleware/database";
import { appliedMigrationTimes, derivedRefreshAge, type RefreshAge } from "../queries/health";
import { jsonContent } from "./openapi";

const MigrationsSchema = v.pipe(
  v.object({
    applied: v.pipe(v.number(), v.description("Migrations recorded in the database.")),
    expected: v.pipe(v.number(), v.description("Migrations this version of the Worker was built with.")),
    latest: v.pipe(
      v.nullable(v.string()),
      v.description("The newest applied migration this version knows, by tag (`0044_funnel_step_index`)."),
    ),
    pending: v.pipe(
      v.number(),
      v.description("This version's migrations not applied yet: above 0, run `npm run db:migrate`."),
    ),
  }),
  v.description("The database's migration level against the one this Worker expects."),
);

const lastRunAt = (what: string) =>
  v.pipe(
    v.nullable(v.string()),
    v.description(
      `When the last refresh of ${what} began (ISO 8601): they hold the events committed before then. Null before the first.`,
    ),
  );

const ageSeconds = v.pipe(
  v.nullable(v.number()),
  v.description(
    "Seconds since then, by the database's clock. The cron trigger refreshes every minute; a busy " +
      "ingest's runs can take longer (a trigger that finds one under way skips), so alert well above 60.",
  ),
);

const RefreshSchema = v.pipe(
  v.object({
    lastRunAt: lastRunAt("the sessions and the rollups"),
    ageSeconds,
    strings: v.pipe(
      v.object({ lastRunAt: lastRunAt("the session strings"), ageSeconds }),
      v.description(
        "The bit strings that answer two or three filters (and a filter on several paths or an origin). " +
          "The cron folds them beside the next run, from the sessions committed by then, so they follow " +
          "the sessions by up to a run; their age above the sessions' says they have fallen behind.",
      ),
    ),
  }),
  v.description(
    "How fresh the sessions, rollups and other derived tables are: the answers count the events up to " +
      "the last refresh (the raw exports and charts read newer events too).",
  ),
);

const HealthSchema = v.object({
  status: v.pipe(
    v.picklist(["ok", "degraded"]),
    v.description("`degraded`: the database is unreachable or behind."),
  ),
  database: v.picklist(["ok", "unreachable"]),
  version: v.pipe(v.string(), v.description("The service's version (package.json).")),
  migrations: v.optional(MigrationsSchema),
  refresh: v.optional(RefreshSchema),
});

/** A refresh's age as the response states it. */
const stated = (age: RefreshAge) => ({
  lastRunAt: age.lastRunAt?.toISOString() ?? null,
  ageSeconds: age.ageSeconds,
});

/** The migration level of a database, given the journal times it has applied. */
function migrationLevel(applied: readonly number[]): v.InferOutput<typeof MigrationsSchema> {
  const done = new Set(applied);
  const known = journal.entries.filter((entry) => done.has(entry.when));
  return {
    applied: applied.length,
    expected: journal.entries.length,
    latest: known.at(-1)?.tag ?? null,
    pending: journal.entries.length - known.length,
  };
}

export const health = new Hono<AppEnv>().get(
  "/health",
  describeRoute({
    operationId: "getHealth",
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
      // The migrations' read is the round trip that proves the database reachable.
      const migrations = migrationLevel(await appliedMigrationTimes(useDatabase(c)));
      const status = migrations.pending > 0 ? "degraded" : "ok";
      // Stated, not judged: how often a deployment refreshes is its own (an idle `wrangler dev`
      // has no cron at all), so an old refresh is for the operator's alert, not a degraded status.
      const ages = await derivedRefreshAge(useDatabase(c));
      const refresh = { ...stated(ages), strings: stated(ages.strings) };
      return c.json({ status, database: "ok", version, migrations, refresh } as const, 200);
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
      return c.json({ status: "degraded", database: "unreachable", version } as const, 503, {
        "Retry-After": "5",
      });
    }
  },
);
