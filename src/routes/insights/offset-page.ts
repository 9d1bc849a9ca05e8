import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { cursorSecret, decodeOffsetCursor, encodeOffsetCursor, queryFingerprint } from "../../lib/cursors";
import { cacheKey } from "../../middleware/cache";

/**
 * The page of a ranked list that a request asks for: the offset its cursor names, bound to the
 * query by `inputs` (everything that decides the list), the cache key of that page, and the
 * cursor of the page after it.
 */
export async function offsetPage(
  c: Context<AppEnv>,
  route: string,
  inputs: Record<string, unknown>,
  query: { limit: number; cursor?: string },
) {
  const projectId = c.get("project").id;
  const fingerprint = await queryFingerprint({ route, project: projectId, ...inputs });
  const secret = cursorSecret(c.env);
  const page = { offset: await decodeOffsetCursor(secret, query.cursor, fingerprint), limit: query.limit };
  return {
    page,
    cacheKey: await cacheKey(projectId, route, { fingerprint, page }),
    /** The next page's cursor when another page follows. */
    next: (hasMore: boolean): Promise<string | undefined> =>
      hasMore
        ? encodeOffsetCursor(secret, page.offset + page.limit, fingerprint)
        : Promise.resolve(undefined),
  };
}
