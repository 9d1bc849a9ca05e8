import { Hono } from "hono";
import type { AppEnv } from "../../env";

/** GET /export/events (contract section 6). Placeholder until the export issue lands. */
export const events = new Hono<AppEnv>();
