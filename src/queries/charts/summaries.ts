import { compareDecimals, decimalMean, decimalSum, percentChange } from "../../lib/decimal";
import type { ChartMetrics, Comparison } from "../../schemas/charts";

/** Sum, mean, min and max of bucket values, as decimal text. */
function summarize(values: readonly string[]): Record<"sum" | "average" | "min" | "max", string> {
  if (values.length === 0) return { sum: "0", average: "0", min: "0", max: "0" };
  const sum = decimalSum(values);
  let min = values[0] ?? "0";
  let max = min;
  for (const value of values) {
    if (compareDecimals(value, min) < 0) min = value;
    if (compareDecimals(value, max) > 0) max = value;
  }
  return { sum, average: decimalMean(sum, values.length, 2), min, max };
}

/**
 * The previous value beside the current one: the signed change, OpenPanel's unsigned `diff` (its
 * clients read that one; null when the values are equal) and which way it went.
 */
export function comparison(current: string, previous: string): Comparison {
  const order = compareDecimals(current, previous);
  const change = percentChange(current, previous);
  return {
    value: Number(previous),
    change,
    diff: change === null || order === 0 ? null : Math.abs(change),
    state: order > 0 ? "positive" : order < 0 ? "negative" : "neutral",
  };
}

/**
 * The summaries of a series (or of every series) over its bucket values, and with a previous period
 * the same summaries there and how each changed. Exact decimal arithmetic throughout.
 */
export function chartMetrics(
  current: readonly string[],
  previous: readonly string[] | undefined,
): ChartMetrics {
  const now = summarize(current);
  const metrics: ChartMetrics = {
    sum: Number(now.sum),
    average: Number(now.average),
    min: Number(now.min),
    max: Number(now.max),
  };
  if (previous) {
    const before = summarize(previous);
    metrics.previous = {
      sum: comparison(now.sum, before.sum),
      average: comparison(now.average, before.average),
      min: comparison(now.min, before.min),
      max: comparison(now.max, before.max),
    };
  }
  return metrics;
}
