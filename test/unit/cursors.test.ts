import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  cursorSecret,
  decodeEventCursor,
  decodeListingCursor,
  decodeOffsetCursor,
  encodeEventCursor,
  encodeListingCursor,
  encodeOffsetCursor,
  queryFingerprint,
} from "../../src/lib/cursors";
import { ApiError } from "../../src/lib/errors";

// Expected cursor texts are built here with Node's Buffer and MACs with node:crypto, never by the
// code under test.

const ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const MS = 1_763_719_062_123; // 2026-11-21T09:57:42.123Z
const SECRET = "test-cursor-secret";
const OTHER_SECRET = "another-deployment";
const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");
const macOf = (kind: string, text: string, secret = SECRET) =>
  createHmac("sha256", secret)
    .update(`${kind}\n${text}`, "utf8")
    .digest()
    .subarray(0, 16)
    .toString("base64url");
/** A cursor as this API signs it: base64url of the text, a dot, the truncated HMAC. */
const signed = (kind: "event" | "offset" | "listing", text: string, secret = SECRET) =>
  `${base64url(text)}.${macOf(kind, text, secret)}`;
const eventCursor = (text: string) => signed("event", text);
const offsetCursor = (text: string) => signed("offset", text);

// The first and last milliseconds of years 1 and 9999, checked against Date below.
const YEAR_1_START = -62_135_596_800_000;
const YEAR_9999_END = 253_402_300_799_999;

describe("the cursor secret", () => {
  it("is CURSOR_SECRET when set, else derived from DATABASE_URL, never the bare connection string", () => {
    expect(cursorSecret({ CURSOR_SECRET: "s3cret", DATABASE_URL: "postgres://a" })).toBe("s3cret");
    const derived = cursorSecret({ DATABASE_URL: "postgres://a" });
    expect(derived).not.toBe("postgres://a");
    expect(derived).toContain("postgres://a");
    expect(cursorSecret({ CURSOR_SECRET: "", DATABASE_URL: "postgres://a" })).toBe(derived);
    expect(cursorSecret({ DATABASE_URL: "postgres://b" })).not.toBe(derived);
  });
});

describe("event cursors", () => {
  it("are base64url of v1:<ms>:<id>, a dot and the first 16 bytes of HMAC-SHA-256 over `event` and the text", async () => {
    const text = `v1:${MS}:${ID}`;
    const cursor = await encodeEventCursor(SECRET, { createdAt: MS, id: ID });
    expect(cursor).toBe(`${base64url(text)}.${macOf("event", text)}`);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  });

  it("write the id in lower case", async () => {
    expect(await encodeEventCursor(SECRET, { createdAt: MS, id: ID.toUpperCase() })).toBe(
      eventCursor(`v1:${MS}:${ID}`),
    );
  });

  it("round-trip their position", async () => {
    for (const createdAt of [MS, 0, -1_000]) {
      for (const id of [ID, ID.toUpperCase()]) {
        const cursor = await encodeEventCursor(SECRET, { createdAt, id });
        expect(await decodeEventCursor(SECRET, cursor)).toEqual({ createdAt, id: ID });
      }
    }
  });

  it("decode a text signed outside the code under test in the same layout", async () => {
    expect(await decodeEventCursor(SECRET, eventCursor(`v1:1234567:${ID}`))).toEqual({
      createdAt: 1_234_567,
      id: ID,
    });
  });

  it("are refused when forged, edited, signed with another secret or unsigned", async () => {
    const text = `v1:${MS}:${ID}`;
    const cursor = eventCursor(text);
    expect(await decodeEventCursor(SECRET, cursor)).toBeDefined();
    // The old unsigned layout and the text alone.
    expect(await decodeEventCursor(SECRET, base64url(text))).toBeUndefined();
    // Another deployment's secret, the offset kind's MAC over the same text.
    expect(await decodeEventCursor(SECRET, signed("event", text, OTHER_SECRET))).toBeUndefined();
    expect(await decodeEventCursor(SECRET, signed("offset", text))).toBeUndefined();
    // A position moved with the MAC kept.
    const moved = `${base64url(`v1:${MS + 1}:${ID}`)}.${cursor.split(".")[1]}`;
    expect(await decodeEventCursor(SECRET, moved)).toBeUndefined();
    // One MAC character changed.
    const mac = cursor.split(".")[1] ?? "";
    const flipped = `${cursor.split(".")[0]}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    expect(await decodeEventCursor(SECRET, flipped)).toBeUndefined();
    // The full 32-byte MAC and a shorter one.
    const full = createHmac("sha256", SECRET).update(`event\n${text}`).digest("base64url");
    expect(await decodeEventCursor(SECRET, `${base64url(text)}.${full}`)).toBeUndefined();
    expect(await decodeEventCursor(SECRET, cursor.slice(0, -1))).toBeUndefined();
  });

  it("accept the first millisecond of year 1 and the last of year 9999, nothing outside", async () => {
    expect(new Date(YEAR_1_START).toISOString()).toBe("0001-01-01T00:00:00.000Z");
    expect(new Date(YEAR_9999_END).toISOString()).toBe("9999-12-31T23:59:59.999Z");
    for (const createdAt of [YEAR_1_START, YEAR_9999_END]) {
      expect(await decodeEventCursor(SECRET, eventCursor(`v1:${createdAt}:${ID}`))).toEqual({
        createdAt,
        id: ID,
      });
    }
    for (const createdAt of [
      YEAR_1_START - 1,
      YEAR_9999_END + 1,
      9_000_000_000_000_000,
      -9_000_000_000_000_000,
    ]) {
      expect(await decodeEventCursor(SECRET, eventCursor(`v1:${createdAt}:${ID}`))).toBeUndefined();
    }
    // What the encoder writes for an out-of-range position does not decode either.
    const beyond = await encodeEventCursor(SECRET, { createdAt: YEAR_9999_END + 1, id: ID });
    expect(await decodeEventCursor(SECRET, beyond)).toBeUndefined();
  });

  it.each([
    ["a fraction", `v1:1.5:${ID}`],
    ["an exponent", `v1:1e3:${ID}`],
    ["no digits", `v1::${ID}`],
    ["a plus sign", `v1:+5:${ID}`],
    ["17 digits", `v1:10000000000000000:${ID}`],
    ["spaces", `v1: 5:${ID}`],
  ])("reject a signed timestamp with %s", async (_, text) => {
    expect(await decodeEventCursor(SECRET, eventCursor(text))).toBeUndefined();
  });

  it.each([
    ["another version", `v2:${MS}:${ID}`],
    ["an upper-case version", `V1:${MS}:${ID}`],
    ["no version", `${MS}:${ID}`],
    ["an id that is not a UUID", `v1:${MS}:not-a-uuid`],
    ["a numeric id", `v1:${MS}:12345`],
    ["an upper-case id (never issued)", `v1:${MS}:${ID.toUpperCase()}`],
    ["an id without dashes", `v1:${MS}:${ID.replace(/-/g, "")}`],
    ["an id one digit short", `v1:${MS}:${ID.slice(0, -1)}`],
    ["text after the id", `v1:${MS}:${ID}:x`],
    ["a trailing newline", `v1:${MS}:${ID}\n`],
    ["a missing id", `v1:${MS}`],
    ["JSON", JSON.stringify({ createdAt: MS, id: ID })],
    ["non-ASCII text", `v1:${MS}:${ID}é`],
  ])("reject a signed text with %s", async (_, text) => {
    expect(await decodeEventCursor(SECRET, eventCursor(text))).toBeUndefined();
  });

  it("reject characters outside the base64url alphabet and padding", async () => {
    const cursor = eventCursor(`v1:${MS}:${ID}`);
    const [text = "", mac = ""] = cursor.split(".");
    expect(await decodeEventCursor(SECRET, cursor)).toBeDefined();
    for (const variant of [
      `${Buffer.from(`v1:${MS}:${ID}`).toString("base64")}.${mac}`,
      `${text}=.${mac}`,
      `${text}.${mac}=`,
      `+${text.slice(1)}.${mac}`,
      `/${text.slice(1)}.${mac}`,
      `${cursor} `,
      ` ${cursor}`,
      `${text}..${mac}`,
      `${text}.${mac}.${mac}`,
    ]) {
      expect(await decodeEventCursor(SECRET, variant)).toBeUndefined();
    }
  });

  it("reject empty text and text that is not a cursor at all", async () => {
    for (const text of ["", ".", "abcde", "not-a-cursor", `.${"A".repeat(22)}`]) {
      expect(await decodeEventCursor(SECRET, text)).toBeUndefined();
    }
  });
});

/** The error `run` rejects with; fails the test when it settles without one. */
async function thrownBy(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

async function expectCursorRejected(run: () => Promise<unknown>): Promise<void> {
  const error = await thrownBy(run);
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ status: 400, code: "VALIDATION_FAILED" });
  expect((error as ApiError).errors[0]?.path).toBe("cursor");
  expect((error as ApiError).errors).toHaveLength(1);
}

describe("offset cursors", () => {
  const fingerprint = "0123456789abcdef";
  const other = "fedcba9876543210";
  const decode = (cursor: string | undefined, print = fingerprint) =>
    decodeOffsetCursor(SECRET, cursor, print);

  it("are base64url of {o, q}, a dot and the MAC over `offset` and the text", async () => {
    const text = `{"o":40,"q":"${fingerprint}"}`;
    expect(await encodeOffsetCursor(SECRET, 40, fingerprint)).toBe(
      `${base64url(text)}.${macOf("offset", text)}`,
    );
  });

  it("round-trip the offset under the same fingerprint", async () => {
    for (const offset of [0, 1, 40, 1_000_000]) {
      expect(await decode(await encodeOffsetCursor(SECRET, offset, fingerprint))).toBe(offset);
    }
    expect(await decode(offsetCursor(`{"q":"${fingerprint}","o":25}`))).toBe(25);
  });

  it("give 0 without a cursor", async () => {
    expect(await decode(undefined)).toBe(0);
    expect(await decode(undefined, "")).toBe(0);
  });

  it("are a 400 at `cursor` against another query", async () => {
    const cursor = await encodeOffsetCursor(SECRET, 40, fingerprint);
    await expectCursorRejected(() => decode(cursor, other));
    await expectCursorRejected(() => decode(cursor, fingerprint.toUpperCase()));
    await expectCursorRejected(() => decode(offsetCursor('{"o":40}')));
  });

  it("are a 400 at `cursor` when forged: unsigned, another secret, an edited offset, the event kind", async () => {
    const text = `{"o":40,"q":"${fingerprint}"}`;
    await expectCursorRejected(() => decode(base64url(text)));
    await expectCursorRejected(() => decode(signed("offset", text, OTHER_SECRET)));
    await expectCursorRejected(() => decode(signed("event", text)));
    const mac = offsetCursor(text).split(".")[1];
    await expectCursorRejected(() => decode(`${base64url(`{"o":4000,"q":"${fingerprint}"}`)}.${mac}`));
  });

  it("say to start again without the cursor", async () => {
    const error = await thrownBy(async () => decode(await encodeOffsetCursor(SECRET, 1, fingerprint), other));
    expect((error as ApiError).errors[0]?.message).toBe(
      "cursor is not valid for this query; start again without it",
    );
  });

  it.each([
    ["a negative offset", `{"o":-1,"q":"${fingerprint}"}`],
    ["a fractional offset", `{"o":1.5,"q":"${fingerprint}"}`],
    ["an offset past the safe integers (a bigint the query cannot parse)", `{"o":1e21,"q":"${fingerprint}"}`],
    ["an offset of 2^53", `{"o":9007199254740992,"q":"${fingerprint}"}`],
    ["an offset as text", `{"o":"5","q":"${fingerprint}"}`],
    ["a null offset", `{"o":null,"q":"${fingerprint}"}`],
    ["no offset", `{"q":"${fingerprint}"}`],
    ["null", "null"],
    ["an array", `[5,"${fingerprint}"]`],
    ["a bare number", "5"],
    ["text that is not JSON", "not json"],
  ])("are a 400 at `cursor` with %s, even when signed", async (_, text) => {
    await expectCursorRejected(() => decode(offsetCursor(text)));
  });

  it("are a 400 at `cursor` for garbage and empty text", async () => {
    await expectCursorRejected(() => decode(""));
    await expectCursorRejected(() => decode("!!!"));
    await expectCursorRejected(() => decode("abcde"));
    await expectCursorRejected(async () =>
      decode(await encodeEventCursor(SECRET, { createdAt: MS, id: ID })),
    );
  });

  it("refuse what the encoder writes for a negative or fractional offset", async () => {
    await expectCursorRejected(async () => decode(await encodeOffsetCursor(SECRET, -10, fingerprint)));
    await expectCursorRejected(async () => decode(await encodeOffsetCursor(SECRET, 2.5, fingerprint)));
  });
});

describe("query fingerprints", () => {
  const sha256Prefix = (parts: unknown) =>
    createHash("sha256").update(JSON.stringify(parts), "utf8").digest("hex").slice(0, 16);

  it("are the first 16 hex digits of the SHA-256 of the inputs' JSON", async () => {
    const parts = { projectId: "p1", range: "7d", filters: [{ name: "path", value: ["/é"] }] };
    const fingerprint = await queryFingerprint(parts);
    expect(fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint).toBe(sha256Prefix(parts));
  });

  it("are equal for equal inputs and differ for different ones", async () => {
    const a = await queryFingerprint({ projectId: "p1", offset: 0, range: ["2026-11-01", "2026-11-30"] });
    const b = await queryFingerprint({ projectId: "p1", offset: 0, range: ["2026-11-01", "2026-11-30"] });
    const c = await queryFingerprint({ projectId: "p2", offset: 0, range: ["2026-11-01", "2026-11-30"] });
    const d = await queryFingerprint({ projectId: "p1", offset: 0, range: ["2026-11-01", "2026-11-29"] });
    expect(a).toBe(b);
    expect(new Set([a, c, d]).size).toBe(3);
  });

  it("bind offset cursors to their query", async () => {
    const first = await queryFingerprint({ projectId: "p1", limit: 10 });
    const second = await queryFingerprint({ projectId: "p1", limit: 20 });
    const cursor = await encodeOffsetCursor(SECRET, 10, first);
    const again = await queryFingerprint({ projectId: "p1", limit: 10 });
    expect(await decodeOffsetCursor(SECRET, cursor, again)).toBe(10);
    await expectCursorRejected(() => decodeOffsetCursor(SECRET, cursor, second));
  });
});

describe("listing cursors", () => {
  const fingerprint = "0123456789abcdef";
  const position = { createdAt: MS, id: ID };

  it("are base64url of {t, i, q}, a dot and the MAC over `listing` and the text", async () => {
    const text = `{"t":${MS},"i":"${ID}","q":"${fingerprint}"}`;
    expect(await encodeListingCursor(SECRET, position, fingerprint)).toBe(signed("listing", text));
  });

  it("round-trip the position under the same fingerprint; none without a cursor", async () => {
    const cursor = await encodeListingCursor(SECRET, position, fingerprint);
    expect(await decodeListingCursor(SECRET, cursor, fingerprint)).toEqual(position);
    expect(await decodeListingCursor(SECRET, undefined, fingerprint)).toBeUndefined();
  });

  it("are a 400 against another query, forged, of another kind or out of range", async () => {
    const cursor = await encodeListingCursor(SECRET, position, fingerprint);
    await expectCursorRejected(() => decodeListingCursor(SECRET, cursor, "fedcba9876543210"));
    const text = `{"t":${MS},"i":"${ID}","q":"${fingerprint}"}`;
    await expectCursorRejected(() => decodeListingCursor(SECRET, base64url(text), fingerprint));
    await expectCursorRejected(() => decodeListingCursor(SECRET, signed("offset", text), fingerprint));
    await expectCursorRejected(() =>
      decodeListingCursor(SECRET, signed("listing", text, OTHER_SECRET), fingerprint),
    );
    for (const t of [YEAR_9999_END + 1, 1.5, "5"]) {
      const bad = signed("listing", JSON.stringify({ t, i: ID, q: fingerprint }));
      await expectCursorRejected(() => decodeListingCursor(SECRET, bad, fingerprint));
    }
    const noId = signed("listing", JSON.stringify({ t: MS, q: fingerprint }));
    await expectCursorRejected(() => decodeListingCursor(SECRET, noId, fingerprint));
  });
});
