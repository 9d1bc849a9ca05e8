import { Hono } from "hono";
import type { AppEnv } from "../../env";

/** GET /export/charts (contract section 7). Placeholder until the export issue lands. */
export const charts = new Hono<AppEnv>();
