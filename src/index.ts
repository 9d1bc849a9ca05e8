import { createApp } from "./app";
import type { Bindings } from "./env";
import { runScheduled } from "./scheduled";

export { ClientRateLimiter } from "./durable-objects/client-rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: runScheduled,
} satisfies ExportedHandler<Bindings>;
