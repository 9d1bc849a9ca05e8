import type { DatabaseHandle } from "./db/client";
import type { StreamReport } from "./lib/export-format";
import type { RequestTiming } from "./lib/request-timing";

/** Worker bindings: the `Env` that `wrangler types` writes to worker-configuration.d.ts, completed in src/bindings.d.ts. */
export type Bindings = Env;

/** The caller, once its credentials are verified (set by the `authenticate` middleware). */
export interface AuthenticatedClient {
  id: string;
  type: "read" | "root";
  organizationId: string;
  /** The one project a `read` client may read; null for `root` clients (whole organization). */
  projectId: string | null;
}

/** The project of the request, once the client is allowed to read it (set by `authorizeProject`). */
export interface ReadableProject {
  id: string;
  organizationId: string;
  /** IANA zone the project reports in (UTC when the project has none). */
  timezone: string;
  /** Epoch ms of its first event, null without events (for "all time" windows; up to 30 s stale). */
  firstEventAt: number | null;
}

/** What the middleware leaves on the request for the routes. */
export interface AppVariables {
  requestId: string;
  /** The request's database time, set first by `observeRequests`. */
  timing?: RequestTiming;
  /** Opened lazily by `useDatabase`; absent until a query needs it. */
  database?: DatabaseHandle;
  /** Set by a streamed export: what it sent, once its body has ended (for the request's log line). */
  streamed?: Promise<StreamReport & { rows: number }>;
  client: AuthenticatedClient;
  project: ReadableProject;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: AppVariables;
}
