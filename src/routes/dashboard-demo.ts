import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../env";

const DemoClient = v.object({
  clientId: v.pipe(v.string(), v.minLength(1)),
  clientSecret: v.pipe(v.string(), v.minLength(1)),
  projectId: v.pipe(v.string(), v.minLength(1)),
});

/**
 * `/dashboard/demo-client`: the read client the dashboard opens with, when the Worker is told one
 * (`DASHBOARD_DEMO_CLIENT`, a JSON `{clientId, clientSecret, projectId}` that `npm run dev` sets to
 * the demo read client). Unset, as in production, it is a 404 like any unknown path, so no
 * credential is ever handed out by a deployed Worker.
 */
export const dashboardDemo = new Hono<AppEnv>().get(
  "/dashboard/demo-client",
  describeRoute({ hide: true }),
  (c) => {
    const text = c.env.DASHBOARD_DEMO_CLIENT?.trim() ?? "";
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const demo = v.safeParse(DemoClient, parsed);
    // The app's own 404, as for any path without a route.
    if (!demo.success) return c.notFound();
    c.header("Cache-Control", "no-store");
    return c.json(demo.output);
  },
);
