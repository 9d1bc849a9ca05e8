import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { authenticate, authorizeProject } from "../../lib/auth";
import { live } from "./live";

/** `/insights/{projectId}/…`: every route reads one project the client may read. */
export const insights = new Hono<AppEnv>()
  .use("/:projectId/*", authenticate, async (c, next) => {
    await authorizeProject(c, c.req.param("projectId") ?? "");
    await next();
  })
  .route("/", live);
