import { describe, expect, it } from "vitest";
import {
  answeredByLeaves,
  LEAF_MAX_KEYS,
  LEAF_PATH_MAX_BYTES,
  LEAF_VALUE_MAX_BYTES,
} from "../../src/queries/property-leaves";

describe("answeredByLeaves", () => {
  it("takes keys and values the leaves hold as `#>>` reads them", () => {
    expect(answeredByLeaves(["plan"], ["pro", "49", "true", ""])).toBe(true);
    expect(answeredByLeaves(["items", "0", "sku"], ["x"])).toBe(true);
    expect(answeredByLeaves(["items", "12"], ["x"])).toBe(true);
    // Keys that only look numeric in part are plain keys.
    expect(answeredByLeaves(["1a", "2 ", "0x1", "1.5"], ["x"])).toBe(true);
  });

  it("leaves positions written another way to the events (strtol's syntax)", () => {
    for (const key of ["01", "-1", "+2", " 3", "\t4", "00"]) {
      expect(answeredByLeaves(["items", key], ["x"])).toBe(false);
    }
  });

  it("leaves values printed as objects or arrays to the events", () => {
    expect(answeredByLeaves(["tier"], ['{"a": 1}'])).toBe(false);
    expect(answeredByLeaves(["tags"], ["pro", '["a", "b"]'])).toBe(false);
    expect(answeredByLeaves(["tags"], [" [a]"])).toBe(true);
  });

  it("holds to the limits under which a leaf is kept, in UTF-8 bytes", () => {
    expect(answeredByLeaves(["note"], ["x".repeat(LEAF_VALUE_MAX_BYTES)])).toBe(true);
    expect(answeredByLeaves(["note"], ["x".repeat(LEAF_VALUE_MAX_BYTES + 1)])).toBe(false);
    // "é" is two bytes.
    expect(answeredByLeaves(["note"], ["é".repeat(LEAF_VALUE_MAX_BYTES / 2 + 1)])).toBe(false);
    expect(answeredByLeaves(["k".repeat(LEAF_PATH_MAX_BYTES)], ["x"])).toBe(true);
    expect(
      answeredByLeaves(["k".repeat(LEAF_PATH_MAX_BYTES / 2), "k".repeat(LEAF_PATH_MAX_BYTES / 2 + 1)], ["x"]),
    ).toBe(false);
    expect(
      answeredByLeaves(
        Array.from({ length: LEAF_MAX_KEYS }, () => "a"),
        ["x"],
      ),
    ).toBe(true);
    expect(
      answeredByLeaves(
        Array.from({ length: LEAF_MAX_KEYS + 1 }, () => "a"),
        ["x"],
      ),
    ).toBe(false);
    expect(answeredByLeaves([], ["x"])).toBe(false);
    expect(answeredByLeaves(["plan"], [])).toBe(false);
  });
});
