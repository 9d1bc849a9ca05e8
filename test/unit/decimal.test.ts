import { describe, expect, it } from "vitest";
import { compareDecimals, decimalMean, decimalSum, percentChange, percentOf } from "../../src/lib/decimal";

// Every expected value below was worked out by hand; the floating-point answers the code must not
// give are noted beside the cases built to catch them.

describe("decimalSum", () => {
  it("sums more values than a call may take arguments (a chart of many series and buckets)", () => {
    // 500,000 arguments overflow the stack of a spread call in Node and workerd alike.
    const values = Array.from({ length: 500_000 }, (_, i) => (i === 0 ? "0.25" : "1"));
    expect(decimalSum(values)).toBe("499999.25");
  });

  it("is 0 for no values", () => {
    expect(decimalSum([])).toBe("0");
  });

  it("adds exactly: 0.1 + 0.2 is 0.3", () => {
    // In binary floating point this is 0.30000000000000004.
    expect(decimalSum(["0.1", "0.2"])).toBe("0.3");
  });

  it("keeps the largest scale of its inputs", () => {
    expect(decimalSum(["1.5", "2.25", "-0.75"])).toBe("3.00");
    expect(decimalSum(["1", "2.500"])).toBe("3.500");
    expect(decimalSum(["12"])).toBe("12");
    expect(decimalSum(["5."])).toBe("5");
  });

  it("handles negatives, including sums below zero and above -1", () => {
    expect(decimalSum(["-1", "0.5"])).toBe("-0.5");
    expect(decimalSum(["-0.25", "0.05"])).toBe("-0.20");
    expect(decimalSum(["-3", "-4.5"])).toBe("-7.5");
    expect(decimalSum(["-2.5", "2.5"])).toBe("0.0");
  });

  it("reads signs, leading zeros and surrounding space", () => {
    expect(decimalSum(["007", "+3"])).toBe("10");
    expect(decimalSum([" 2 ", "0.05"])).toBe("2.05");
  });

  it("stays exact past 2^53", () => {
    expect(decimalSum(["9007199254740993", "1"])).toBe("9007199254740994");
    expect(decimalSum(["123456789012345678.9", "0.1"])).toBe("123456789012345679.0");
  });

  it.each(["abc", "1e5", ".5", "", "1.2.3", "--1", "0x10", "NaN"])("throws on %j", (text) => {
    expect(() => decimalSum([text])).toThrow(`not a decimal: ${text}`);
  });
});

describe("decimalMean", () => {
  it("is 0 without values", () => {
    expect(decimalMean("0", 0, 2)).toBe("0");
    expect(decimalMean("12.5", 0, 2)).toBe("0");
    expect(decimalMean("12.5", -3, 2)).toBe("0");
  });

  it("rounds half away from zero like Postgres' round", () => {
    // 1.005 as a double is 1.00499999999999989…, which a float rounding would take to 1.00.
    expect(decimalMean("1.005", 1, 2)).toBe("1.01");
    expect(decimalMean("-1.005", 1, 2)).toBe("-1.01");
    expect(decimalMean("3.015", 3, 2)).toBe("1.01");
    expect(decimalMean("5", 2, 0)).toBe("3");
    expect(decimalMean("-5", 2, 0)).toBe("-3");
    expect(decimalMean("0.125", 1, 2)).toBe("0.13");
    expect(decimalMean("1.0049", 1, 2)).toBe("1.00");
  });

  it("divides and rounds to the places asked", () => {
    expect(decimalMean("10", 3, 2)).toBe("3.33");
    expect(decimalMean("20", 3, 2)).toBe("6.67");
    expect(decimalMean("-20", 3, 2)).toBe("-6.67");
    expect(decimalMean("1", 4, 2)).toBe("0.25");
    expect(decimalMean("2", 3, 4)).toBe("0.6667");
    expect(decimalMean("7", 2, 1)).toBe("3.5");
  });

  it("writes every place, trailing zeros included", () => {
    expect(decimalMean("0.5", 1, 2)).toBe("0.50");
    expect(decimalMean("6", 2, 2)).toBe("3.00");
    expect(decimalMean("6.000", 2, 0)).toBe("3");
  });

  it("gives no negative zero when a small negative mean rounds to 0", () => {
    expect(decimalMean("1", 400, 2)).toBe("0.00");
    expect(decimalMean("-1", 400, 2)).toBe("0.00");
    expect(decimalMean("-0.004", 1, 2)).toBe("0.00");
  });
});

describe("compareDecimals", () => {
  it.each([
    ["0.30", "0.3", 0],
    ["-0", "0", 0],
    ["2", "2.000", 0],
    ["10", "9", 1],
    ["9", "10", -1],
    ["-1.5", "-1.25", -1],
    ["-1.25", "-1.5", 1],
    ["0.1", "-0.1", 1],
    // Equal as doubles, not as decimals.
    ["1.0000000000000001", "1", 1],
    ["9007199254740993", "9007199254740992", 1],
  ])("compareDecimals(%j, %j) is %i", (a, b, expected) => {
    expect(compareDecimals(a, b)).toBe(expected);
  });

  it("orders a list like a numeric sort", () => {
    const values = ["10", "-2", "9.99", "0", "-2.5", "0.001"];
    expect([...values].sort(compareDecimals)).toEqual(["-2.5", "-2", "0", "0.001", "9.99", "10"]);
  });
});

describe("percentChange", () => {
  it("is the signed change relative to the previous value, to one decimal", () => {
    expect(percentChange("3", "2")).toBe(50);
    expect(percentChange("1", "2")).toBe(-50);
    expect(percentChange("1", "3")).toBe(-66.7);
    expect(percentChange("4", "3")).toBe(33.3);
    expect(percentChange("5", "3")).toBe(66.7);
    expect(percentChange("200", "100")).toBe(100);
    expect(percentChange("0", "100")).toBe(-100);
    expect(percentChange("7", "7.00")).toBe(0);
  });

  it("is relative to |previous|, so a rise from a negative value is positive", () => {
    expect(percentChange("-5", "-10")).toBe(50);
    expect(percentChange("-20", "-10")).toBe(-100);
    expect(percentChange("2", "-2")).toBe(200);
    expect(percentChange("-2", "2")).toBe(-200);
  });

  it("rounds half away from zero", () => {
    // +0.05 % and -0.05 %.
    expect(percentChange("1.0005", "1")).toBe(0.1);
    expect(percentChange("0.9995", "1")).toBe(-0.1);
    // +0.04 % rounds down.
    expect(percentChange("1.0004", "1")).toBe(0);
    // 1/8 = 12.5 %, 1/16 = 6.25 % → 6.3, -6.25 % → -6.3
    expect(percentChange("9", "8")).toBe(12.5);
    expect(percentChange("17", "16")).toBe(6.3);
    expect(percentChange("15", "16")).toBe(-6.3);
  });

  it("gives 0, never -0, for a fall too small to show", () => {
    const change = percentChange("0.9999", "1");
    expect(change).toBe(0);
    expect(Object.is(change, -0)).toBe(false);
    expect(Object.is(percentChange("5", "5"), 0)).toBe(true);
  });

  it("is null when the previous value is zero", () => {
    expect(percentChange("5", "0")).toBeNull();
    expect(percentChange("0", "0")).toBeNull();
    expect(percentChange("-3", "0.00")).toBeNull();
  });

  it("works across scales", () => {
    expect(percentChange("1.5", "1")).toBe(50);
    expect(percentChange("1", "0.25")).toBe(300);
    expect(percentChange("0.001", "0.002")).toBe(-50);
  });
});

describe("percentOf", () => {
  it.each([
    [1, 8, 12.5],
    [1, 3, 33.33],
    [2, 3, 66.67],
    [1, 16_000, 0.01],
    [3, 3, 100],
    [5, 0, 0],
  ])("%i of %i is %d %%", (part, whole, expected) => {
    expect(percentOf(part, whole)).toBe(expected);
  });
});
