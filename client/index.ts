/**
 * A typed client of this API: openapi-fetch over the types generated from /openapi.json
 * (`client/openapi.d.ts`, `npm run client:generate`). Paths, parameters and answers are checked by
 * TypeScript; JSON parameters (`filters`, `series`, `breakdowns`) are passed as objects.
 *
 *   const api = createAnalyticsClient({ baseUrl, clientId, clientSecret });
 *   const { data, error } = await api.GET("/insights/{projectId}/metrics", {
 *     params: { path: { projectId: "demo" }, query: { range: "30d", filters: [{ name: "country", operator: "is", value: ["SE"] }] } },
 *   });
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./openapi";

export type { components, paths };
export type Problem = components["schemas"]["Problem"];
export type Filter = components["schemas"]["FilterList"][number];

export interface AnalyticsClientOptions {
  /** The Worker's origin, e.g. `https://analytics.example.workers.dev` or `http://127.0.0.1:8787`. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Another fetch (a test double, a proxy); the global one by default. */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * The query string as the API reads it: a list of objects (a JSON parameter) as one JSON value, a
 * list of texts as the key repeated, everything else as its text; absent values are left out.
 */
export function serializeQuery(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value) && value.every((item) => typeof item !== "object")) {
      for (const item of value) search.append(key, String(item));
    } else if (typeof value === "object") {
      search.append(key, JSON.stringify(value));
    } else {
      search.append(key, String(value));
    }
  }
  return search.toString();
}

export type AnalyticsClient = Client<paths>;

export function createAnalyticsClient(options: AnalyticsClientOptions): AnalyticsClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: {
      "openpanel-client-id": options.clientId,
      "openpanel-client-secret": options.clientSecret,
    },
    querySerializer: serializeQuery,
    // The credentials travel in headers. With the browser's own credentials mode, a 401 (which
    // carries `WWW-Authenticate: Basic`) would open the browser's sign-in dialog over the page.
    credentials: "omit",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
