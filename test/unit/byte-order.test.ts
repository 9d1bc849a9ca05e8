import { describe, expect, it } from "vitest";
import { byteOrder, byteOrderNullsLast } from "../../src/lib/byte-order";

/** Postgres's `collate "C"` order, which the rankings done in the Worker must agree with. */
describe("byteOrder", () => {
  it("orders by UTF-8 bytes, so a character past U+FFFF sorts after U+E000–U+FFFF", () => {
    // In UTF-16 the emoji's first unit (0xD83D) is below U+FFFD; in UTF-8 its first byte (0xF0) is above.
    expect("😀" < "\uFFFD").toBe(true);
    expect(byteOrder("😀", "\uFFFD")).toBeGreaterThan(0);
    expect(byteOrder("\uFFFD", "😀")).toBeLessThan(0);
    expect(["b", "😀", "\uE000", "B", "a", "ab", ""].sort(byteOrder)).toEqual([
      "",
      "B",
      "a",
      "ab",
      "b",
      "\uE000",
      "😀",
    ]);
  });

  it("is zero for equal texts only", () => {
    expect(byteOrder("/pricing", "/pricing")).toBe(0);
    expect(byteOrder("/pricing", "/pricing/")).toBeLessThan(0);
    expect(byteOrder("é", "e\u0301")).not.toBe(0);
  });

  it("puts NULL after every text", () => {
    expect([null, "z", null, "a"].sort(byteOrderNullsLast)).toEqual(["a", "z", null, null]);
    expect(byteOrderNullsLast(null, null)).toBe(0);
  });
});
