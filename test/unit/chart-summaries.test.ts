import { describe, expect, it } from "vitest";
import { chartMetrics, comparison } from "../../src/queries/charts/summaries";

// Every expected value below was worked out by hand from the bucket values of the case.

describe("chartMetrics without a previous period", () => {
  it("gives sum, average (2 decimals), min and max and no `previous`", () => {
    // 7 / 3 = 2.333…
    expect(chartMetrics(["1", "2", "4"], undefined)).toStrictEqual({ sum: 7, average: 2.33, min: 1, max: 4 });
  });

  it("rounds the average half away from zero on the exact sum", () => {
    // 2.01 / 2 = 1.005 → 1.01 (a float mean would give 1.00).
    expect(chartMetrics(["1", "1.01"], undefined).average).toBe(1.01);
    // 20 / 3 = 6.666… → 6.67
    expect(chartMetrics(["20", "0", "0"], undefined).average).toBe(6.67);
    // -2.01 / 2 = -1.005 → -1.01
    expect(chartMetrics(["-1", "-1.01"], undefined).average).toBe(-1.01);
  });

  it("sums exactly", () => {
    // A float sum would be 0.30000000000000004.
    expect(chartMetrics(["0.1", "0.2"], undefined)).toStrictEqual({
      sum: 0.3,
      average: 0.15,
      min: 0.1,
      max: 0.2,
    });
  });

  it("takes min and max numerically, with negatives and mixed scales", () => {
    expect(chartMetrics(["-1.5", "0.25", "2", "10", "9.99"], undefined)).toStrictEqual({
      sum: 20.74,
      average: 4.15, // 20.74 / 5 = 4.148
      min: -1.5,
      max: 10,
    });
    // Text order would put "9" above "10" and "-1" below "-10".
    expect(chartMetrics(["9", "10", "-1", "-10"], undefined)).toMatchObject({ min: -10, max: 10 });
  });

  it("is all zeros for no buckets", () => {
    expect(chartMetrics([], undefined)).toStrictEqual({ sum: 0, average: 0, min: 0, max: 0 });
  });

  it("counts zero buckets in the average and the min", () => {
    expect(chartMetrics(["0", "3", "0", "0"], undefined)).toStrictEqual({
      sum: 3,
      average: 0.75,
      min: 0,
      max: 3,
    });
  });

  it("gives one bucket as its own sum, average, min and max", () => {
    expect(chartMetrics(["-4.5"], undefined)).toStrictEqual({
      sum: -4.5,
      average: -4.5,
      min: -4.5,
      max: -4.5,
    });
  });
});

describe("chartMetrics with a previous period", () => {
  it("compares each summary with the previous period's", () => {
    // current: sum 60, average 20, min 10, max 30; previous: sum 60, average 20, min 20, max 20.
    expect(chartMetrics(["10", "20", "30"], ["20", "20", "20"])).toStrictEqual({
      sum: 60,
      average: 20,
      min: 10,
      max: 30,
      previous: {
        sum: { value: 60, change: 0, diff: null, state: "neutral" },
        average: { value: 20, change: 0, diff: null, state: "neutral" },
        min: { value: 20, change: -50, diff: 50, state: "negative" },
        max: { value: 20, change: 50, diff: 50, state: "positive" },
      },
    });
  });

  it("summarizes the previous period over its own buckets when it has a different number", () => {
    // current: 6, 3, 3, 3; previous: sum 6, average 2, min 1, max 3.
    expect(chartMetrics(["3", "3"], ["1", "2", "3"]).previous).toStrictEqual({
      sum: { value: 6, change: 0, diff: null, state: "neutral" },
      average: { value: 2, change: 50, diff: 50, state: "positive" },
      min: { value: 1, change: 200, diff: 200, state: "positive" },
      max: { value: 3, change: 0, diff: null, state: "neutral" },
    });
  });

  it("compares the averages as rounded to 2 decimals", () => {
    // current average 2 / 3 = 0.67; previous 1.00; (0.67 - 1) / 1 = -33 % exactly (-33.3 unrounded).
    expect(chartMetrics(["1", "1", "0"], ["1", "1"]).previous?.average).toStrictEqual({
      value: 1,
      change: -33,
      diff: 33,
      state: "negative",
    });
  });

  it("gives a null change against a previous value of 0", () => {
    expect(chartMetrics(["5", "0"], ["0", "0"]).previous).toStrictEqual({
      sum: { value: 0, change: null, diff: null, state: "positive" },
      average: { value: 0, change: null, diff: null, state: "positive" },
      min: { value: 0, change: null, diff: null, state: "neutral" },
      max: { value: 0, change: null, diff: null, state: "positive" },
    });
  });

  it("compares with an empty previous period as zeros", () => {
    const zero = { value: 0, change: null, diff: null, state: "neutral" };
    expect(chartMetrics([], [])).toStrictEqual({
      sum: 0,
      average: 0,
      min: 0,
      max: 0,
      previous: { sum: zero, average: zero, min: zero, max: zero },
    });
  });

  it("measures changes from negative values relative to their magnitude", () => {
    // sum -5 against -10: up by 5, +50 %.
    expect(chartMetrics(["-5"], ["-10"]).previous?.sum).toStrictEqual({
      value: -10,
      change: 50,
      diff: 50,
      state: "positive",
    });
    expect(chartMetrics(["-20"], ["-10"]).previous?.max).toStrictEqual({
      value: -10,
      change: -100,
      diff: 100,
      state: "negative",
    });
  });

  it("compares exactly: 0.1 + 0.2 against 0.3 is no change", () => {
    expect(chartMetrics(["0.1", "0.2"], ["0.3"]).previous?.sum).toStrictEqual({
      value: 0.3,
      change: 0,
      diff: null,
      state: "neutral",
    });
  });
});

describe("comparison", () => {
  it("gives the previous value, the signed change and its direction", () => {
    expect(comparison("12", "8")).toStrictEqual({ value: 8, change: 50, diff: 50, state: "positive" });
    expect(comparison("6", "8")).toStrictEqual({ value: 8, change: -25, diff: 25, state: "negative" });
    expect(comparison("8.0", "8")).toStrictEqual({ value: 8, change: 0, diff: null, state: "neutral" });
    expect(comparison("0", "0")).toStrictEqual({ value: 0, change: null, diff: null, state: "neutral" });
    expect(comparison("-1", "0")).toStrictEqual({ value: 0, change: null, diff: null, state: "negative" });
  });

  it("states the direction exactly even when the change rounds to 0", () => {
    // +0.01 % shows as 0 but is a rise.
    expect(comparison("1.0001", "1")).toStrictEqual({ value: 1, change: 0, diff: 0, state: "positive" });
    expect(comparison("0.9999", "1")).toStrictEqual({ value: 1, change: 0, diff: 0, state: "negative" });
  });
});
