import { ApiError } from "./errors";
import { constantTimeEqual, sha256Hex } from "./secrets";
import { EARLIEST_INSTANT_MS, LATEST_INSTANT_MS } from "./timezone";

/**
 * The API's two cursors, both opaque base64url text signed with a keyed MAC:
 * - a position in the event export's order (`createdAt` and `id` of the last event of a page). It
 *   names a place, not a query, so it stays valid whatever else the request says;
 * - an offset into a ranked insights list, bound to the query it came from by a fingerprint, so a
 *   cursor replayed against another query (range, filters, project) is a 400, never a silently
 *   wrong page;
 * - a keyset position in a listing (`/events`, newest first), bound to its query the same way.
 *
 * Layout: `<base64url(text)>.<base64url(MAC)>`, the MAC being the first 16 bytes of
 * HMAC-SHA-256(secret, kind + "\n" + text). Only this API can write a cursor it accepts: a forged or
 * edited one is a 400 before any query runs, and a cursor of one kind never passes as the other.
 */

/** What signs cursors: the CURSOR_SECRET binding, else a key derived from DATABASE_URL. */
export interface CursorKeySource {
  CURSOR_SECRET?: string;
  DATABASE_URL: string;
}

/**
 * The signing secret. DATABASE_URL is a secret every deployment already has, the same in every
 * isolate; the prefix keeps the MAC key apart from the connection string's other uses. Setting
 * CURSOR_SECRET lets an operator rotate cursors without touching the database credentials.
 */
export function cursorSecret(source: CursorKeySource): string {
  return source.CURSOR_SECRET ? source.CURSOR_SECRET : `cursor-key-from-database-url\n${source.DATABASE_URL}`;
}

type CursorKind = "event" | "offset" | "listing";

const MAC_BYTES = 16;
const encoder = new TextEncoder();
// Imported keys by secret: an isolate signs with one or two secrets over its life.
const importedKeys = new Map<string, Promise<CryptoKey>>();

function macKey(secret: string): Promise<CryptoKey> {
  let key = importedKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    importedKeys.set(secret, key);
  }
  return key;
}

async function mac(secret: string, kind: CursorKind, text: string): Promise<string> {
  const signature = await crypto.subtle.sign(
    "HMAC",
    await macKey(secret),
    encoder.encode(`${kind}\n${text}`),
  );
  return bytesToBase64Url(new Uint8Array(signature, 0, MAC_BYTES));
}

function bytesToBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

function toBase64Url(text: string): string {
  return bytesToBase64Url(encoder.encode(text));
}

/** The text of a base64url cursor part, or undefined when it does not decode. */
function fromBase64Url(part: string): string | undefined {
  try {
    // Cursor texts are ASCII; anything else fails the canonical-form check in verified().
    return atob(part.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return undefined;
  }
}

async function sign(secret: string, kind: CursorKind, text: string): Promise<string> {
  return `${toBase64Url(text)}.${await mac(secret, kind, text)}`;
}

/** The signed text of a cursor, or undefined when its layout or MAC is not this API's. */
async function verified(secret: string, kind: CursorKind, cursor: string): Promise<string | undefined> {
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!match?.[1] || !match[2]) return undefined;
  const text = fromBase64Url(match[1]);
  if (text === undefined || toBase64Url(text) !== match[1]) return undefined;
  return constantTimeEqual(await mac(secret, kind, text), match[2]) ? text : undefined;
}

/** A place in the export order: `createdAt` in epoch ms and the event `id`. */
export interface CursorPosition {
  createdAt: number;
  id: string;
}

// `v1` leaves room to change the layout.
const POSITION_TEXT = /^v1:(-?\d{1,16}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function encodeEventCursor(secret: string, position: CursorPosition): Promise<string> {
  return sign(secret, "event", `v1:${position.createdAt}:${position.id.toLowerCase()}`);
}

/** The position a cursor names, or undefined when the text is not a cursor this API issued. */
export async function decodeEventCursor(secret: string, cursor: string): Promise<CursorPosition | undefined> {
  const match = POSITION_TEXT.exec((await verified(secret, "event", cursor)) ?? "");
  if (!match?.[1] || !match[2]) return undefined;
  const createdAt = Number(match[1]);
  if (!Number.isSafeInteger(createdAt) || createdAt < EARLIEST_INSTANT_MS || createdAt > LATEST_INSTANT_MS)
    return undefined;
  return { createdAt, id: match[2] };
}

const invalidCursor = () =>
  ApiError.invalid("cursor", "cursor is not valid for this query; start again without it");

/** The JSON object a signed cursor of `kind` carries, its fields unchecked; a 400 when it is not one. */
async function signedPayload<T>(secret: string, kind: CursorKind, cursor: string): Promise<Partial<T>> {
  let payload: unknown;
  try {
    payload = JSON.parse((await verified(secret, kind, cursor)) ?? "");
  } catch {
    throw invalidCursor();
  }
  return (payload ?? {}) as Partial<T>;
}

interface OffsetPayload {
  o: number;
  q: string;
}

/** A short hash of the inputs that determine a list, which its cursors carry. */
export async function queryFingerprint(parts: unknown): Promise<string> {
  return (await sha256Hex(JSON.stringify(parts))).slice(0, 16);
}

export function encodeOffsetCursor(secret: string, offset: number, fingerprint: string): Promise<string> {
  return sign(secret, "offset", JSON.stringify({ o: offset, q: fingerprint } satisfies OffsetPayload));
}

/** The offset a cursor points at; 0 without a cursor. A forged cursor or another query's is a 400. */
export async function decodeOffsetCursor(
  secret: string,
  cursor: string | undefined,
  fingerprint: string,
): Promise<number> {
  if (cursor === undefined) return 0;
  const { o, q } = await signedPayload<OffsetPayload>(secret, "offset", cursor);
  // A safe integer: an offset past them would reach the query as a bigint it cannot parse.
  if (typeof o !== "number" || !Number.isSafeInteger(o) || o < 0 || q !== fingerprint) throw invalidCursor();
  return o;
}

interface ListingPayload {
  t: number;
  i: string;
  q: string;
}

/** A listing's next page: after `position` (its last row), for the query of `fingerprint` only. */
export function encodeListingCursor(
  secret: string,
  position: CursorPosition,
  fingerprint: string,
): Promise<string> {
  return sign(
    secret,
    "listing",
    JSON.stringify({ t: position.createdAt, i: position.id, q: fingerprint } satisfies ListingPayload),
  );
}

/** The position a listing cursor names; undefined without one. Forged or another query's: a 400. */
export async function decodeListingCursor(
  secret: string,
  cursor: string | undefined,
  fingerprint: string,
): Promise<CursorPosition | undefined> {
  if (cursor === undefined) return undefined;
  const { t, i, q } = await signedPayload<ListingPayload>(secret, "listing", cursor);
  const inRange =
    typeof t === "number" && Number.isSafeInteger(t) && t >= EARLIEST_INSTANT_MS && t <= LATEST_INSTANT_MS;
  if (!inRange || typeof i !== "string" || q !== fingerprint) throw invalidCursor();
  return { createdAt: t, id: i };
}
