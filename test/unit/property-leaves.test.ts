import { describe, expect, it } from "vitest";
import {
  LEAF_MAX_KEYS,
  LEAF_PATH_MAX_BYTES,
  LEAF_VALUE_MAX_BYTES,
  POSITIVE_COUNTERPART,
  propertyAnswer,
} from "../../src/queries/property-leaves";

const keys = (count: number) => Array.from({ length: count }, () => "a");

describe("propertyAnswer", () => {
  it("answers `is` over held texts by the values, as `#>>` reads keys and prints values", () => {
    expect(propertyAnswer("is", ["plan"], ["pro", "49", "true", ""])).toBe("values");
    expect(propertyAnswer("is", ["items", "0", "sku"], ["x"])).toBe("values");
    expect(propertyAnswer("is", ["items", "12"], ["x"])).toBe("values");
    // Keys that only look numeric in part are plain keys.
    expect(propertyAnswer("is", ["1a", "2 ", "0x1", "1.5"], ["x"])).toBe("values");
    expect(propertyAnswer("is", ["tags"], [" [a]"])).toBe("values");
  });

  it("answers `is` over texts the rows mark (objects, arrays, long texts) by the rows and the marked events", () => {
    expect(propertyAnswer("is", ["tier"], ['{"a": 1}'])).toBe("rows");
    expect(propertyAnswer("is", ["tags"], ["pro", '["a", "b"]'])).toBe("rows");
    expect(propertyAnswer("is", ["note"], ["x".repeat(LEAF_VALUE_MAX_BYTES)])).toBe("values");
    expect(propertyAnswer("is", ["note"], ["x".repeat(LEAF_VALUE_MAX_BYTES + 1)])).toBe("rows");
    // "é" is two bytes.
    expect(propertyAnswer("is", ["note"], ["é".repeat(LEAF_VALUE_MAX_BYTES / 2)])).toBe("values");
    expect(propertyAnswer("is", ["note"], ["é".repeat(LEAF_VALUE_MAX_BYTES / 2 + 1)])).toBe("rows");
  });

  it("answers every other positive operator by the rows, whatever its values", () => {
    for (const operator of [
      "contains",
      "startsWith",
      "endsWith",
      "regex",
      "gt",
      "gte",
      "lt",
      "lte",
    ] as const) {
      expect(propertyAnswer(operator, ["plan"], ["pro"])).toBe("rows");
      expect(propertyAnswer(operator, ["plan"], ["{", "x".repeat(LEAF_VALUE_MAX_BYTES + 1)])).toBe("rows");
    }
    expect(propertyAnswer("isNotNull", ["plan"], [])).toBe("rows");
  });

  it("answers the negative operators by the complement of their positive counterparts", () => {
    for (const operator of ["isNot", "doesNotContain", "isNull"] as const) {
      expect(propertyAnswer(operator, ["plan"], operator === "isNull" ? [] : ["pro"])).toBe("complement");
    }
    expect(propertyAnswer("isNot", ["tier"], ['{"a": 1}'])).toBe("complement");
    expect(propertyAnswer("isNot", ["items", "01"], ["x"])).toBe("events");
    expect(POSITIVE_COUNTERPART).toEqual({ isNot: "is", doesNotContain: "contains", isNull: "isNotNull" });
  });

  it("leaves positions written another way to the events (strtol's syntax)", () => {
    for (const key of ["01", "-1", "+2", " 3", "\t4", "00"]) {
      expect(propertyAnswer("is", ["items", key], ["x"])).toBe("events");
      expect(propertyAnswer("contains", ["items", key], ["x"])).toBe("events");
    }
  });

  it("holds to the limits under which a path is kept, in UTF-8 bytes", () => {
    expect(propertyAnswer("is", ["k".repeat(LEAF_PATH_MAX_BYTES)], ["x"])).toBe("values");
    expect(
      propertyAnswer(
        "is",
        ["k".repeat(LEAF_PATH_MAX_BYTES / 2), "k".repeat(LEAF_PATH_MAX_BYTES / 2 + 1)],
        ["x"],
      ),
    ).toBe("events");
    expect(propertyAnswer("is", ["é".repeat(LEAF_PATH_MAX_BYTES / 2 + 1)], ["x"])).toBe("events");
    expect(propertyAnswer("is", keys(LEAF_MAX_KEYS), ["x"])).toBe("values");
    expect(propertyAnswer("is", keys(LEAF_MAX_KEYS + 1), ["x"])).toBe("events");
    expect(propertyAnswer("contains", keys(LEAF_MAX_KEYS + 1), ["x"])).toBe("events");
    expect(propertyAnswer("is", [], ["x"])).toBe("events");
  });
});
