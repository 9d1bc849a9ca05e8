import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  decodeEventCursor,
  decodeOffsetCursor,
  encodeEventCursor,
  encodeOffsetCursor,
  queryFingerprint,
} from "../../src/lib/cursors";
import { ApiError } from "../../src/lib/errors";

// Expected cursor texts are built here with Node's Buffer and hashes with node:crypto, never by the
// code under test.

const ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const MS = 1_763_719_062_123; // 2026-11-21T09:57:42.123Z
const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

// The first and last milliseconds of years 1 and 9999, checked against Date below.
const YEAR_1_START = -62_135_596_800_000;
const YEAR_9999_END = 253_402_300_799_999;

describe("event cursors", () => {
  it("are the unpadded base64url of v1:<ms>:<id>", () => {
    const text = `v1:${MS}:${ID}`;
    // 53 bytes: standard base64 would end in one `=`.
    expect(Buffer.from(text).toString("base64").endsWith("=")).toBe(true);
    const cursor = encodeEventCursor({ createdAt: MS, id: ID });
    expect(cursor).toBe(base64url(text));
    expect(cursor).not.toContain("=");
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("write the id in lower case", () => {
    expect(encodeEventCursor({ createdAt: MS, id: ID.toUpperCase() })).toBe(base64url(`v1:${MS}:${ID}`));
  });

  it("round-trip their position", () => {
    expect(decodeEventCursor(encodeEventCursor({ createdAt: MS, id: ID }))).toEqual({
      createdAt: MS,
      id: ID,
    });
    expect(decodeEventCursor(encodeEventCursor({ createdAt: MS, id: ID.toUpperCase() }))).toEqual({
      createdAt: MS,
      id: ID,
    });
    expect(decodeEventCursor(encodeEventCursor({ createdAt: 0, id: ID }))).toEqual({ createdAt: 0, id: ID });
    expect(decodeEventCursor(encodeEventCursor({ createdAt: -1_000, id: ID }))).toEqual({
      createdAt: -1_000,
      id: ID,
    });
  });

  it("decode a text written by hand in the same layout", () => {
    expect(decodeEventCursor(base64url(`v1:1234567:${ID}`))).toEqual({ createdAt: 1_234_567, id: ID });
  });

  it("accept the first millisecond of year 1 and the last of year 9999, nothing outside", () => {
    expect(new Date(YEAR_1_START).toISOString()).toBe("0001-01-01T00:00:00.000Z");
    expect(new Date(YEAR_9999_END).toISOString()).toBe("9999-12-31T23:59:59.999Z");
    for (const createdAt of [YEAR_1_START, YEAR_9999_END]) {
      expect(decodeEventCursor(base64url(`v1:${createdAt}:${ID}`))).toEqual({ createdAt, id: ID });
    }
    for (const createdAt of [
      YEAR_1_START - 1,
      YEAR_9999_END + 1,
      9_000_000_000_000_000,
      -9_000_000_000_000_000,
    ]) {
      expect(decodeEventCursor(base64url(`v1:${createdAt}:${ID}`))).toBeUndefined();
    }
    // What the encoder writes for an out-of-range position does not decode either.
    expect(decodeEventCursor(encodeEventCursor({ createdAt: YEAR_9999_END + 1, id: ID }))).toBeUndefined();
  });

  it.each([
    ["a fraction", `v1:1.5:${ID}`],
    ["an exponent", `v1:1e3:${ID}`],
    ["no digits", `v1::${ID}`],
    ["a plus sign", `v1:+5:${ID}`],
    ["17 digits", `v1:10000000000000000:${ID}`],
    ["spaces", `v1: 5:${ID}`],
  ])("reject a timestamp with %s", (_, text) => {
    expect(decodeEventCursor(base64url(text))).toBeUndefined();
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
  ])("reject a decoded text with %s", (_, text) => {
    expect(decodeEventCursor(base64url(text))).toBeUndefined();
  });

  it("reject characters outside the base64url alphabet and padding", () => {
    const cursor = encodeEventCursor({ createdAt: MS, id: ID });
    expect(decodeEventCursor(cursor)).toBeDefined();
    // The same bytes in standard, padded base64 (valid for atob, not for the cursor).
    expect(decodeEventCursor(Buffer.from(`v1:${MS}:${ID}`).toString("base64"))).toBeUndefined();
    expect(decodeEventCursor(`${cursor}=`)).toBeUndefined();
    expect(decodeEventCursor(`${cursor}==`)).toBeUndefined();
    expect(decodeEventCursor(`+${cursor.slice(1)}`)).toBeUndefined();
    expect(decodeEventCursor(`/${cursor.slice(1)}`)).toBeUndefined();
    expect(decodeEventCursor(`${cursor} `)).toBeUndefined();
    expect(decodeEventCursor(` ${cursor}`)).toBeUndefined();
    expect(decodeEventCursor(`${cursor.slice(0, 10)}.${cursor.slice(10)}`)).toBeUndefined();
  });

  it("reject empty text and text that is not base64 at all", () => {
    expect(decodeEventCursor("")).toBeUndefined();
    // One character more than a multiple of four never decodes.
    expect(decodeEventCursor("abcde")).toBeUndefined();
    expect(decodeEventCursor("not-a-cursor")).toBeUndefined();
    expect(decodeEventCursor(encodeEventCursor({ createdAt: MS, id: ID }).slice(0, -4))).toBeUndefined();
  });
});

/** The error `run` throws; fails the test when it throws none. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

function expectCursorRejected(run: () => unknown): void {
  const error = thrownBy(run);
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ status: 400, code: "VALIDATION_FAILED" });
  expect((error as ApiError).errors[0]?.path).toBe("cursor");
  expect((error as ApiError).errors).toHaveLength(1);
}

describe("offset cursors", () => {
  const fingerprint = "0123456789abcdef";
  const other = "fedcba9876543210";

  it("are the unpadded base64url of {o, q}", () => {
    expect(encodeOffsetCursor(40, fingerprint)).toBe(base64url(`{"o":40,"q":"${fingerprint}"}`));
  });

  it("round-trip the offset under the same fingerprint", () => {
    for (const offset of [0, 1, 40, 1_000_000]) {
      expect(decodeOffsetCursor(encodeOffsetCursor(offset, fingerprint), fingerprint)).toBe(offset);
    }
    expect(decodeOffsetCursor(base64url(`{"q":"${fingerprint}","o":25}`), fingerprint)).toBe(25);
  });

  it("give 0 without a cursor", () => {
    expect(decodeOffsetCursor(undefined, fingerprint)).toBe(0);
    expect(decodeOffsetCursor(undefined, "")).toBe(0);
  });

  it("are a 400 at `cursor` against another query", () => {
    const cursor = encodeOffsetCursor(40, fingerprint);
    expectCursorRejected(() => decodeOffsetCursor(cursor, other));
    expectCursorRejected(() => decodeOffsetCursor(cursor, fingerprint.toUpperCase()));
    expectCursorRejected(() => decodeOffsetCursor(base64url('{"o":40}'), fingerprint));
  });

  it("say to start again without the cursor", () => {
    const error = thrownBy(() => decodeOffsetCursor(encodeOffsetCursor(1, fingerprint), other));
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
  ])("are a 400 at `cursor` with %s", (_, text) => {
    expectCursorRejected(() => decodeOffsetCursor(base64url(text), fingerprint));
  });

  it("are a 400 at `cursor` for garbage and empty text", () => {
    expectCursorRejected(() => decodeOffsetCursor("", fingerprint));
    expectCursorRejected(() => decodeOffsetCursor("!!!", fingerprint));
    expectCursorRejected(() => decodeOffsetCursor("abcde", fingerprint));
    expectCursorRejected(() => decodeOffsetCursor(encodeEventCursor({ createdAt: MS, id: ID }), fingerprint));
  });

  it("refuse what the encoder writes for a negative or fractional offset", () => {
    expectCursorRejected(() => decodeOffsetCursor(encodeOffsetCursor(-10, fingerprint), fingerprint));
    expectCursorRejected(() => decodeOffsetCursor(encodeOffsetCursor(2.5, fingerprint), fingerprint));
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
    const cursor = encodeOffsetCursor(10, first);
    expect(decodeOffsetCursor(cursor, await queryFingerprint({ projectId: "p1", limit: 10 }))).toBe(10);
    expectCursorRejected(() => decodeOffsetCursor(cursor, second));
  });
});
