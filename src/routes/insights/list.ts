import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { cursorSecret, decodeOffsetCursor, encodeOffsetCursor, queryFingerprint } from "../../lib/cursors";
import { nextPageHeaders } from "../../lib/paging";
import type { RangePreset } from "../../lib/range";
import { cacheKey, freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { assertValidRegexes } from "../../queries/filter-conditions";
import type { Page, SessionScope } from "../../queries/insights/model";
import { CursorParam, LimitParam, RangeParams, type RangeQuery } from "../params";
import { resolveInsightsScope, sessionScopeOf, windowHeaders } from "./scope";

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
  const fingerprint = await queryFingerprint({ route, project: project.id, ...scope.fingerprint });
  const secret = cursorSecret(c.env);
  const offset = await decodeOffsetCursor(secret, query.cursor, fingerprint);
  const page = { offset, limit: query.limit };
  const key = await cacheKey(project.id, route, { ...scope.fingerprint, page });
  const answer = await readThrough(c, key, freshnessFor(scope.range), async () => {
    const db = useDatabase(c);
    await assertValidRegexes(db, scope.filters);
    const rows = await fetchRows(db, sessionScopeOf(scope, project.id), page);
    return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
  });
  const next = answer.value.hasMore
    ? await encodeOffsetCursor(secret, offset + page.limit, fingerprint)
    : undefined;
  return sendJson(c, {
    body: answer.value.rows,
    freshFor: answer.freshFor,
    cacheStatus: answer.cacheStatus,
    headers: { ...nextPageHeaders(c.req.url, next), ...windowHeaders(scope.range) },
  });
}
