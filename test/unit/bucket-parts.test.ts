import { describe, expect, it } from "vitest";
import { bucketParts, chartBuckets } from "../../src/queries/charts/bucket-parts";
import type { ChartPeriod, ChartSeriesQuery } from "../../src/queries/charts/model";

// Expected parts worked out by hand.
const DAY = 86_400_000;
const at = (text: string) => Date.parse(text);
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function period(start: string, days: number, step: number): ChartPeriod {
  const from = at(start);
  const buckets: number[] = [];
  for (let t = from; t < from + days * DAY; t += step * DAY) buckets.push(t);
  return { window: { start: from, end: from + days * DAY }, buckets };
}

function query(current: ChartPeriod, previous?: ChartPeriod): ChartSeriesQuery {
  return {
    projectId: "p",
    event: "*",
    segment: "user",
    filters: [],
    breakdowns: [],
    limit: 10,
    current,
    previous,
    rollups: true,
  };
}

describe("bucketParts", () => {
  it("keeps a short window, or a window of one bucket, to one statement", () => {
    expect(bucketParts(query(period("2026-11-01T00:00:00Z", 13, 1)), "UTC")).toBeUndefined();
    expect(bucketParts(query(period("2026-11-01T00:00:00Z", 30, 30)), "UTC")).toBeUndefined();
    // A week and the week before: 14 days, in two buckets.
    const week = bucketParts(
      query(period("2026-11-08T00:00:00Z", 7, 7), period("2026-11-01T00:00:00Z", 7, 7)),
      "UTC",
    );
    expect(week?.map((part) => part.buckets.map(({ period, bucket }) => [period, bucket]))).toEqual([
      [[0, 1]],
      [[1, 1]],
    ]);
    expect(week?.map((part) => [day(part.days[0] ?? 0), part.days.length])).toEqual([
      ["2026-11-08", 7],
      ["2026-11-01", 7],
    ]);
  });

  it("deals whole buckets of both periods out in turn, every day of them once", () => {
    // 30 days by day with the 30 before: 60 buckets of a day.
    const parts = bucketParts(
      query(period("2026-10-31T00:00:00Z", 30, 1), period("2026-10-01T00:00:00Z", 30, 1)),
      "UTC",
    );
    expect(parts?.map((part) => part.buckets.length)).toEqual([30, 30]);
    expect(parts?.[0]?.buckets.slice(0, 2)).toEqual([
      { period: 0, bucket: 1, days: [at("2026-10-31T00:00:00Z")] },
      { period: 0, bucket: 3, days: [at("2026-11-02T00:00:00Z")] },
    ]);
    const days = parts?.flatMap((part) => part.days) ?? [];
    expect(new Set(days).size).toBe(60);
    expect(days.length).toBe(60);
    // 90 days by week: 12 buckets of 7 days and a last of 6, dealt 7 and 6, the short one to the first.
    const weeks = bucketParts(query(period("2026-08-30T00:00:00Z", 90, 7)), "UTC");
    expect(weeks?.map((part) => part.buckets.map(({ bucket }) => bucket))).toEqual([
      [1, 3, 5, 7, 9, 11, 13],
      [2, 4, 6, 8, 10, 12],
    ]);
    expect(weeks?.map((part) => part.days.length)).toEqual([48, 42]);
  });

  it("clips a bucket starting before its window to the window, in the project's zone", () => {
    // Oslo's week buckets start on the Monday before the window (2026-03-26, a Thursday); the
    // clocks change on the 29th, so its midnights are 23:00 UTC before and 22:00 UTC after.
    const window = { start: at("2026-03-25T23:00:00Z"), end: at("2026-04-08T22:00:00Z") };
    const buckets = [at("2026-03-22T23:00:00Z"), at("2026-03-29T22:00:00Z"), at("2026-04-05T22:00:00Z")];
    const [first, second, third] = chartBuckets(query({ window, buckets }), "Europe/Oslo");
    expect(first?.days.map((ms) => new Date(ms).toISOString())).toEqual([
      "2026-03-25T23:00:00.000Z",
      "2026-03-26T23:00:00.000Z",
      "2026-03-27T23:00:00.000Z",
      "2026-03-28T23:00:00.000Z",
    ]);
    expect(second?.days.length).toBe(7);
    expect(second?.days.at(-1)).toBe(at("2026-04-04T22:00:00Z"));
    expect(third?.days.length).toBe(3);
  });
});
