import { env } from "cloudflare:test";

/**
 * Cursors signed here, independently of src/lib/cursors.ts, with the key the Worker under test
 * uses (no CURSOR_SECRET in the tests: derived from DATABASE_URL): base64url of the text, a dot,
 * the first 16 bytes of HMAC-SHA-256 over "<kind>\n<text>".
 */
const encoder = new TextEncoder();
const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

export async function signedCursor(
  kind: "event" | "offset",
  text: string,
  secret = `cursor-key-from-database-url\n${env.DATABASE_URL}`,
): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, encoder.encode(`${kind}\n${text}`)),
    0,
    16,
  );
  return `${base64url(encoder.encode(text))}.${base64url(mac)}`;
}

/** The text a cursor carries (its signature left aside). */
export function cursorText(cursor: string): string {
  return atob((cursor.split(".")[0] ?? "").replace(/-/g, "+").replace(/_/g, "/"));
}
