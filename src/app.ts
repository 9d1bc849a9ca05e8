import { Hono } from "hono";
import { requestId } from "hono/request-id";
import type { AppEnv } from "./env";
import { corsForBrowserApps } from "./middleware/cors";
import { closeDatabaseAfterResponse } from "./middleware/database";
import { handleError, handleNotFound } from "./middleware/errors";
import { readOnlyMethods } from "./middleware/read-only-methods";
import { checkRequestShape } from "./middleware/request-limits";
import { observeRequests } from "./middleware/request-log";
import { dashboardDemo } from "./routes/dashboard-demo";
import { errorReference } from "./routes/error-reference";
import { exportRoutes } from "./routes/export";
import { health } from "./routes/health";
import { insights } from "./routes/insights";
import { reference } from "./routes/reference";

/** The whole service: shared middleware, then the route groups. */
export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(handleError);
  app.notFound(handleNotFound);
  app.use(
    requestId(),
    observeRequests,
    readOnlyMethods,
    corsForBrowserApps,
    checkRequestShape,
    closeDatabaseAfterResponse,
  );
  app.route("/", health);
  app.route("/insights", insights);
  app.route("/export", exportRoutes);
  app.route("/", dashboardDemo);
  app.route("/", errorReference);
  app.route("/", reference(app));
  return app;
}
