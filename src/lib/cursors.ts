import { ApiError } from "./errors";
import { sha256Hex } from "./secrets";
import { EARLIEST_INSTANT_MS, LATEST_INSTANT_MS } from "./timezone";

/**
 * The API's two cursors, both opaque base64url text:
 * - a position in the event export's order (`createdAt` and `id` of the last event of a page). It
 *   names a place, not a query, so it stays valid whatever else the request says;
 * - an offset into a ranked insights list, bound to the query it came from by a fingerprint, so a
 *   cursor replayed against another query (range, filters, project) is a 400, never a silently
 *   wrong page.
 */

function toBase64Url(text: string): string {
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The text of a base64url cursor, or undefined when it does not decode. */
function fromBase64Url(cursor: string): string | undefined {
  try {
    return atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return undefined;
  }
}

/** A place in the export order: `createdAt` in epoch ms and the event `id`. */
export interface CursorPosition {
  createdAt: number;
  id: string;
}

// `v1` leaves room to change the layout.
const POSITION_TEXT = /^v1:(-?\d{1,16}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function encodeEventCursor(position: CursorPosition): string {
  return toBase64Url(`v1:${position.createdAt}:${position.id.toLowerCase()}`);
}

/** The position a cursor names, or undefined when the text is not a cursor this API issued. */
export function decodeEventCursor(cursor: string): CursorPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const match = POSITION_TEXT.exec(fromBase64Url(cursor) ?? "");
  if (!match?.[1] || !match[2]) return undefined;
  const createdAt = Number(match[1]);
  if (!Number.isSafeInteger(createdAt) || createdAt < EARLIEST_INSTANT_MS || createdAt > LATEST_INSTANT_MS)
    return undefined;
  return { createdAt, id: match[2] };
}

interface OffsetPayload {
  o: number;
  q: string;
}

/** A short hash of the inputs that determine a list, which its cursors carry. */
export async function queryFingerprint(parts: unknown): Promise<string> {
  return (await sha256Hex(JSON.stringify(parts))).slice(0, 16);
}

export function encodeOffsetCursor(offset: number, fingerprint: string): string {
  return toBase64Url(JSON.stringify({ o: offset, q: fingerprint } satisfies OffsetPayload));
}

/** The offset a cursor points at; 0 without a cursor. A cursor of another query is a 400. */
export function decodeOffsetCursor(cursor: string | undefined, fingerprint: string): number {
  if (cursor === undefined) return 0;
  const invalid = ApiError.invalid("cursor", "cursor is not valid for this query; start again without it");
  let payload: unknown;
  try {
    payload = JSON.parse(fromBase64Url(cursor) ?? "");
  } catch {
    throw invalid;
  }
  const { o, q } = (payload ?? {}) as Partial<OffsetPayload>;
  // A safe integer: a forged `1e21` would otherwise reach the query as a bigint it cannot parse.
  if (typeof o !== "number" || !Number.isSafeInteger(o) || o < 0 || q !== fingerprint) throw invalid;
  return o;
}
