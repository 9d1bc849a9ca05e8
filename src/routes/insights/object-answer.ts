import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { cacheKey, freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { assertValidRegexes } from "../../queries/filter-conditions";
import { type InsightsScope, scopeMeta } from "./scope";

/**
 * Answers an object body (`/profiles/{id}`, its metrics, the analyses): computed through the cache
 * under the scope and `inputs`, then sent with the window in `meta` (stated per request: a
 * lifetime scope ends now), plus the route's own `meta` fields.
 */
export async function answerObject<Body extends object>(
  c: Context<AppEnv>,
  answer: {
    route: string;
    scope: InsightsScope;
    inputs: Record<string, unknown>;
    compute: (db: ReturnType<typeof useDatabase>) => Promise<Body>;
    meta?: Record<string, unknown>;
  },
): Promise<Response> {
  const { scope } = answer;
  const key = await cacheKey(c.get("project").id, answer.route, { ...scope.fingerprint, ...answer.inputs });
  const cached = await readThrough(c, key, freshnessFor(scope.range), async () => {
    const db = useDatabase(c);
    await assertValidRegexes(db, scope.filters);
    return answer.compute(db);
  });
  return sendJson(c, {
    body: { ...cached.value, meta: { ...scopeMeta(scope), ...answer.meta } },
    freshFor: cached.freshFor,
    cacheStatus: cached.cacheStatus,
  });
}
