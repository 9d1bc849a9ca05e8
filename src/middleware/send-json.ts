import type { Context } from "hono";
import type { AppEnv } from "../env";
import { entityTag } from "./cache";

export interface JsonAnswer {
  /** Serialized once here, so the ETag is the hash of exactly the bytes sent. */
  body: unknown;
  /** Seconds a client may reuse the answer; 0 means revalidate every time. */
  freshFor?: number;
  cacheStatus?: string;
  headers?: Record<string, string>;
}

function matchesIfNoneMatch(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const bare = etag.replace(/^W\//, "");
  return ifNoneMatch.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === bare);
}

/**
 * The request headers an answer depends on besides its URL: the credentials. Without this a
 * browser's cache, keyed by URL, would hand an answer fetched with good credentials to a later
 * request with wrong ones (seen in the dashboard's browser test).
 */
export const CREDENTIAL_VARY = "Authorization, openpanel-client-id, openpanel-client-secret";

/**
 * Sends a 200 JSON answer with an ETag, or a 304 when the client already holds it
 * (contract section 9). Every successful JSON response of the API goes through here.
 */
export async function sendJson(c: Context<AppEnv>, answer: JsonAnswer): Promise<Response> {
  const text = JSON.stringify(answer.body);
  const etag = await entityTag(text);
  const headers: Record<string, string> = {
    ...answer.headers,
    ETag: etag,
    "Cache-Control": `private, max-age=${answer.freshFor ?? 0}`,
  };
  if (answer.cacheStatus) headers["Cache-Status"] = answer.cacheStatus;
  // Appended: the CORS middleware may already vary on Origin.
  c.header("Vary", CREDENTIAL_VARY, { append: true });
  if (matchesIfNoneMatch(c.req.header("if-none-match"), etag)) {
    return c.body(null, 304, headers);
  }
  return c.body(text, 200, { ...headers, "Content-Type": "application/json; charset=utf-8" });
}
