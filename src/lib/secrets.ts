/**
 * Client secrets are stored as `sha256$<salt>$<digest>` (hex). Secrets are random and long
 * (see `generateSecret`), so one salted SHA-256 is enough to make a leaked table useless while
 * keeping verification far below 1 ms of CPU on Workers; a slow KDF would only be needed for
 * human-chosen passwords. This module uses Web Crypto only, so the Worker and the Node scripts
 * share it.
 */

const encoder = new TextEncoder();

function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const byte of view) out += byte.toString(16).padStart(2, "0");
  return out;
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

export function randomHex(byteLength: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** A new client secret: 32 random bytes, URL-safe. */
export function generateSecret(): string {
  return `sec_${randomHex(32)}`;
}

export async function hashSecret(secret: string, salt: string = randomHex(16)): Promise<string> {
  return `sha256$${salt}$${await sha256Hex(`${salt}:${secret}`)}`;
}

/** Compares without an early exit, so the time taken does not reveal how much matched. */
export function constantTimeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, salt, digest] = stored.split("$");
  if (scheme !== "sha256" || salt === undefined || digest === undefined) return false;
  const candidate = await hashSecret(secret, salt);
  return constantTimeEqual(candidate, stored);
}
