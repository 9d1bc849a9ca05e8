import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../lib/errors";
import { authorizeProject } from "../../middleware/auth";
import { admitClient } from "../../middleware/rate-limit";
import { charts } from "./charts/route";
import { events } from "./events/route";

/**
 * `/export/…`: the project comes from `projectId` (or `project_id`). A read client may omit it
 * and gets its own project; a root client reads many projects, so it must say which.
 */
export const exportRoutes = new Hono<AppEnv>()
  .use("*", admitClient, async (c, next) => {
    const client = c.get("client");
    const requested = c.req.query("projectId") ?? c.req.query("project_id");
    if (requested === undefined || requested === "") {
      if (client.type === "root" || client.projectId === null) {
        throw ApiError.invalid(
          "projectId",
          "projectId is required for a root client: it can read several projects",
        );
      }
      await authorizeProject(c, client.projectId);
    } else {
      await authorizeProject(c, requested);
    }
    await next();
  })
  .route("/", events)
  .route("/", charts);
