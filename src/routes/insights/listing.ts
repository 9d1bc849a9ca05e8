import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { cursorSecret, decodeListingCursor, encodeListingCursor, queryFingerprint } from "../../lib/cursors";
import type { Filter } from "../../lib/filter-parser";
import { nextPageHeaders } from "../../lib/paging";
import { cacheKey, freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { assertValidRegexes } from "../../queries/filter-conditions";
import type { ListingPosition } from "../../queries/listings/events";
import { type InsightsScope, windowHeaders } from "./scope";

/**
 * Answers a keyset listing (`/events`, `/sessions`, `/profiles…`): decodes the cursor (signed, bound to the query
 * by `inputs`), reads one row more than `limit` through the cache, and sends the rows as a bare
 * array with the next page in `Link`/`X-Next-Cursor` and the window in `X-Window-*`.
 */
export async function answerListing<Row extends { position: ListingPosition }>(
  c: Context<AppEnv>,
  listing: {
    route: string;
    scope: InsightsScope;
    /** Every filter the rows pass, for the regex check. */
    filters: Filter[];
    /** What else decides the rows (names, column parameters…), for the fingerprint. */
    inputs: Record<string, unknown>;
    limit: number;
    cursor: string | undefined;
    read: (
      db: ReturnType<typeof useDatabase>,
      page: { limit: number; after?: ListingPosition },
    ) => Promise<Row[]>;
  },
): Promise<Response> {
  const { route, scope, limit } = listing;
  const projectId = c.get("project").id;
  const fingerprint = await queryFingerprint({
    route,
    project: projectId,
    ...scope.fingerprint,
    ...listing.inputs,
  });
  const secret = cursorSecret(c.env);
  const after = await decodeListingCursor(secret, listing.cursor, fingerprint);
  const key = await cacheKey(projectId, route, { fingerprint, after: after ?? null, limit });
  const answer = await readThrough(c, key, freshnessFor(scope.range), async () => {
    const db = useDatabase(c);
    await assertValidRegexes(db, listing.filters);
    const rows = await listing.read(db, { limit: limit + 1, after });
    return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
  });
  const last = answer.value.rows.at(-1);
  const next =
    answer.value.hasMore && last ? await encodeListingCursor(secret, last.position, fingerprint) : undefined;
  return sendJson(c, {
    body: answer.value.rows.map(({ position: _position, ...row }) => row),
    freshFor: answer.freshFor,
    cacheStatus: answer.cacheStatus,
    headers: { ...nextPageHeaders(c.req.url, next), ...windowHeaders(scope.range, scope.lifetime) },
  });
}
