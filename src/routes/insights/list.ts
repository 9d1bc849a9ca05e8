import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { nextPageHeaders } from "../../lib/paging";
import type { RangePreset } from "../../lib/range";
import { freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import type { Page, SessionScope } from "../../queries/insights/model";
import { CursorParam, LimitParam, RangeParams, type RangeQuery } from "../params";
import { offsetPage } from "./offset-page";
import { checkedSessionScope, resolveInsightsScope, windowHeaders } from "./scope";

/** Query of the ranked insights lists: the shared range parameters plus `cursor`/`limit`. */
export const ListQuery = v.object({ ...RangeParams, limit: LimitParam(10), cursor: CursorParam });

/**
 * Answers a ranked list endpoint: resolves scope and page, reads through the cache, and sets the
 * `Link`/`X-Next-Cursor` headers. The body stays a plain array (contract section 4).
 */
export async function answerList<Row>(
  c: Context<AppEnv>,
  route: string,
  query: RangeQuery & { limit: number; cursor?: string },
  fetchRows: (db: ReturnType<typeof useDatabase>, scope: SessionScope, page: Page) => Promise<Row[]>,
  /** `7d` for the contract's section 4 lists; `30d` for the analyses contract's routes (A1). */
  defaultRange: RangePreset = "7d",
): Promise<Response> {
  const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange });
  const project = c.get("project");
  const { page, cacheKey: key, next: nextCursor } = await offsetPage(c, route, scope.fingerprint, query);
  const answer = await readThrough(c, key, freshnessFor(scope.range), async () => {
    const db = useDatabase(c);
    const rows = await fetchRows(db, await checkedSessionScope(db, scope, project.id), page);
    return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
  });
  const next = await nextCursor(answer.value.hasMore);
  return sendJson(c, {
    body: answer.value.rows,
    freshFor: answer.freshFor,
    cacheStatus: answer.cacheStatus,
    headers: { ...nextPageHeaders(c.req.url, next), ...windowHeaders(scope.range) },
  });
}
