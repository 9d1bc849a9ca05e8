import * as v from "valibot";
import { ApiError } from "./errors";
import { sha256Hex } from "./secrets";

/**
 * Cursor paging for the aggregated insights lists. A list is recomputed on every request, so the
 * cursor carries the position in the sorted list plus a fingerprint of the query it belongs to:
 * a cursor replayed against another query (other range, filters, project) is a 400, never a
 * silently wrong page.
 */

export const LimitParam = (defaultLimit: number, max = 1000) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `limit must be a whole number from 1 to ${max}`),
      v.toNumber(),
      v.minValue(1, `limit must be from 1 to ${max}`),
      v.maxValue(max, `limit must be from 1 to ${max}`),
      v.description(
        `Rows per page, 1–${max} (default ${defaultLimit}). Larger values are refused, never clamped.`,
      ),
    ),
    String(defaultLimit),
  );

export const CursorParam = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(200, "cursor is not one this API issued"),
    v.description("Opaque cursor from the previous page's `X-Next-Cursor` header (or its `Link: rel=next`)."),
  ),
);

interface CursorPayload {
  o: number;
  q: string;
}

function toBase64Url(text: string): string {
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string {
  return atob(text.replace(/-/g, "+").replace(/_/g, "/"));
}

export async function queryFingerprint(parts: unknown): Promise<string> {
  return (await sha256Hex(JSON.stringify(parts))).slice(0, 16);
}

export function encodeOffsetCursor(offset: number, fingerprint: string): string {
  return toBase64Url(JSON.stringify({ o: offset, q: fingerprint } satisfies CursorPayload));
}

/** The offset a cursor points at; 0 without a cursor. */
export function decodeOffsetCursor(cursor: string | undefined, fingerprint: string): number {
  if (cursor === undefined) return 0;
  const invalid = ApiError.invalid("cursor", "cursor is not valid for this query; start again without it");
  let payload: unknown;
  try {
    payload = JSON.parse(fromBase64Url(cursor));
  } catch {
    throw invalid;
  }
  const { o, q } = (payload ?? {}) as Partial<CursorPayload>;
  if (typeof o !== "number" || !Number.isInteger(o) || o < 0 || q !== fingerprint) throw invalid;
  return o;
}

/** `Link: <…>; rel="next"` and `X-Next-Cursor` for the page after this one (contract section 4). */
export function nextPageHeaders(requestUrl: string, nextCursor: string | undefined): Record<string, string> {
  if (!nextCursor) return {};
  const url = new URL(requestUrl);
  url.searchParams.set("cursor", nextCursor);
  return { Link: `<${url.toString()}>; rel="next"`, "X-Next-Cursor": nextCursor };
}
