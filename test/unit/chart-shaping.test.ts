import { describe, expect, it } from "vitest";
import { resolveRange } from "../../src/lib/range";
import type { ChartGroup, ChartSeriesResult } from "../../src/queries/charts/model";
import type { ChartRequest } from "../../src/routes/export/charts/request";
import { chartBody } from "../../src/routes/export/charts/shaping";

// Every expected value below was worked out by hand: dates from the 2026 Oslo rules (CEST +02:00
// until 2026-10-25 03:00, CET +01:00 after), summaries from the bucket values, ids with the FNV-1a
// written here.

/** 32-bit FNV-1a of the UTF-8 bytes as 8 hex digits, on BigInt (independent of the module's Math.imul). */
function fnv1a32(text: string): string {
  let hash = 0x811c9dc5n;
  for (const byte of Buffer.from(text, "utf8")) {
    hash = ((hash ^ BigInt(byte)) * 0x01000193n) & 0xffffffffn;
  }
  return hash.toString(16).padStart(8, "0");
}

const TIMEZONE = "Europe/Oslo";
// The three local days 2026-10-24..26: the middle one has 25 hours.
const DATES = ["2026-10-24T00:00:00+02:00", "2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00"];
const META = {
  startDate: "2026-10-24T00:00:00+02:00",
  endDate: "2026-10-26T23:59:59.999+01:00",
  timezone: TIMEZONE,
  interval: "day",
} as const;
// The three days before: 2026-10-21..23, all on +02:00.
const PREVIOUS_META = { startDate: "2026-10-21T00:00:00+02:00", endDate: "2026-10-23T23:59:59.999+02:00" };

function chartRequest(
  names: string[],
  options: { breakdowns?: string[]; previous?: boolean } = {},
): ChartRequest {
  return {
    param: "series",
    series: names.map((name) => ({ name, segment: "event", filters: [] })),
    breakdownNames: options.breakdowns ?? [],
    range: resolveRange({
      startDate: "2026-10-24",
      endDate: "2026-10-26",
      timezone: TIMEZONE,
      interval: "day",
      previous: options.previous ?? false,
      now: new Date("2026-11-21T10:17:42.123Z"),
    }),
    limit: 10,
    fingerprint: {},
  };
}

const group = (breakdowns: Array<string | null>, current: string[], previous?: string[]): ChartGroup =>
  previous === undefined ? { breakdowns, current } : { breakdowns, current, previous };

/** Bucket data without a previous period: each count beside its bucket's date. */
const dated = (counts: number[]) => counts.map((count, position) => ({ date: DATES[position], count }));

/** One result per series, each a single group without breakdowns. */
const plain = (...currents: string[][]): ChartSeriesResult[] =>
  currents.map((current) => ({ groups: [group([], current)], truncated: false }));

describe("the FNV-1a written for these tests", () => {
  it("gives the published 32-bit FNV-1a test vectors", () => {
    expect(fnv1a32("")).toBe("811c9dc5");
    expect(fnv1a32("a")).toBe("e40c292c");
    expect(fnv1a32("foobar")).toBe("bf9cf968");
  });
});

describe("chartBody without breakdowns or previous period", () => {
  const body = chartBody(
    chartRequest(["screen_view", "click", "app_open"]),
    plain(["1", "2", "3"], ["4", "0", "0.5"], ["10", "0", "0"]),
  );

  it("gives each series its id a<n>, its name and its buckets dated in the request's zone", () => {
    expect(body.series).toStrictEqual([
      {
        id: "a3",
        names: ["app_open"],
        event: { id: "a3", name: "app_open" },
        metrics: { sum: 10, average: 3.33, min: 0, max: 10 },
        data: dated([10, 0, 0]),
      },
      {
        id: "a1",
        names: ["screen_view"],
        event: { id: "a1", name: "screen_view" },
        metrics: { sum: 6, average: 2, min: 1, max: 3 },
        data: dated([1, 2, 3]),
      },
      {
        id: "a2",
        names: ["click"],
        event: { id: "a2", name: "click" },
        metrics: { sum: 4.5, average: 1.5, min: 0, max: 4 },
        data: dated([4, 0, 0.5]),
      },
    ]);
  });

  it("summarizes every series' buckets together at the top", () => {
    // 1 2 3 4 0 0.5 10 0 0: sum 20.5, mean 20.5 / 9 = 2.277…
    expect(body.metrics).toStrictEqual({ sum: 20.5, average: 2.28, min: 0, max: 10 });
  });

  it("gives the range's meta with `truncated` and no `previous`", () => {
    expect(body.meta).toStrictEqual({ ...META, truncated: false });
  });
});

describe("chartBody with breakdowns", () => {
  const request = chartRequest(["screen_view", "click"], { breakdowns: ["country", "city"] });
  const body = chartBody(request, [
    {
      groups: [
        group([null, null], ["0", "0", "7"]),
        group(["NO", "Oslo"], ["5", "0", "1"]),
        group(["SE", null], ["2", "2", "2"]),
        group(["CH", "Zürich"], ["1", "0", "0"]),
      ],
      truncated: false,
    },
    { groups: [group(["NO", "Oslo"], ["0.5", "0", "0"])], truncated: true },
  ]);

  it("ids each group a<n>-<FNV-1a of its values' JSON>", () => {
    expect(body.series.map((series) => series.id)).toEqual([
      `a1-${fnv1a32("[null,null]")}`,
      `a1-${fnv1a32('["NO","Oslo"]')}`,
      `a1-${fnv1a32('["SE",null]')}`,
      `a1-${fnv1a32('["CH","Zürich"]')}`,
      `a2-${fnv1a32('["NO","Oslo"]')}`,
    ]);
    // ü is hashed as its two UTF-8 bytes (c3 bc), not as one UTF-16 code unit.
    expect(body.series[0]?.id).toMatch(/^a1-[0-9a-f]{8}$/);
  });

  it("names each group with its values, (not set) for null", () => {
    expect(body.series.map((series) => series.names)).toEqual([
      ["screen_view", "(not set)", "(not set)"],
      ["screen_view", "NO", "Oslo"],
      ["screen_view", "SE", "(not set)"],
      ["screen_view", "CH", "Zürich"],
      ["click", "NO", "Oslo"],
    ]);
  });

  it("maps each breakdown name to its value in `event`, null where not set", () => {
    expect(body.series.map((series) => series.event)).toStrictEqual([
      { id: "a1", name: "screen_view", breakdowns: { country: null, city: null } },
      { id: "a1", name: "screen_view", breakdowns: { country: "NO", city: "Oslo" } },
      { id: "a1", name: "screen_view", breakdowns: { country: "SE", city: null } },
      { id: "a1", name: "screen_view", breakdowns: { country: "CH", city: "Zürich" } },
      { id: "a2", name: "click", breakdowns: { country: "NO", city: "Oslo" } },
    ]);
  });

  it("summarizes each group over its own buckets and all groups at the top", () => {
    expect(body.series.map((series) => series.metrics)).toStrictEqual([
      { sum: 7, average: 2.33, min: 0, max: 7 },
      { sum: 6, average: 2, min: 0, max: 5 },
      { sum: 6, average: 2, min: 2, max: 2 },
      { sum: 1, average: 0.33, min: 0, max: 1 },
      { sum: 0.5, average: 0.17, min: 0, max: 0.5 },
    ]);
    // 15 buckets summing to 20.5: mean 1.366…
    expect(body.metrics).toStrictEqual({ sum: 20.5, average: 1.37, min: 0, max: 7 });
  });

  it("is truncated when any series was", () => {
    expect(body.meta).toStrictEqual({ ...META, truncated: true });
  });
});

describe("the order of the series", () => {
  const ids = (request: ChartRequest, results: ChartSeriesResult[]) =>
    chartBody(request, results).series.map((series) => series.id);

  it("is by exact sum desc, then name in code-unit order, then request order", () => {
    const request = chartRequest(["b", "a", "B", "a", "z", "y", "p", "o"]);
    const results = plain(
      ["5", "0", "0"],
      ["0", "5", "0"],
      ["2", "2", "1"],
      ["0", "0", "5"],
      // 10 above 9, whatever their text order
      ["9.5", "0.5", "0"],
      ["9", "0", "0"],
      // 0.1 + 0.2 equals 0.3 exactly, so the name decides ("o" before "p")
      ["0.1", "0.2", "0"],
      ["0.3", "0", "0"],
    );
    // "B" (0x42) before "a" (0x61) before "b"; the two "a" series in request order.
    expect(ids(request, results)).toEqual(["a5", "a6", "a3", "a2", "a4", "a1", "a8", "a7"]);
  });

  it("puts request order before a group's rank on equal sums and names", () => {
    const request = chartRequest(["e", "e"], { breakdowns: ["country"] });
    const results: ChartSeriesResult[] = [
      { groups: [group(["A"], ["3", "0", "0"]), group(["B"], ["1", "1", "1"])], truncated: false },
      { groups: [group(["A"], ["0", "0", "3"])], truncated: false },
    ];
    expect(ids(request, results)).toEqual([
      `a1-${fnv1a32('["A"]')}`,
      `a1-${fnv1a32('["B"]')}`,
      `a2-${fnv1a32('["A"]')}`,
    ]);
  });

  it("puts a larger sum first whatever its series' place or rank", () => {
    const request = chartRequest(["a", "b"], { breakdowns: ["country"] });
    const results: ChartSeriesResult[] = [
      { groups: [group(["X"], ["1", "0", "0"]), group(["Y"], ["-2", "0", "0"])], truncated: false },
      { groups: [group(["X"], ["0", "0", "1.5"]), group(["Y"], ["-1", "0", "0"])], truncated: false },
    ];
    expect(ids(request, results)).toEqual([
      `a2-${fnv1a32('["X"]')}`,
      `a1-${fnv1a32('["X"]')}`,
      `a2-${fnv1a32('["Y"]')}`,
      `a1-${fnv1a32('["Y"]')}`,
    ]);
  });
});

describe("chartBody with a previous period", () => {
  const body = chartBody(chartRequest(["screen_view", "click"], { previous: true }), [
    { groups: [group([], ["10", "20", "30"], ["20", "0", "30"])], truncated: false },
    { groups: [group([], ["1", "1", "1"], ["2", "2", "2"])], truncated: false },
  ]);

  it("pairs each bucket with the previous period's bucket at its position", () => {
    expect(body.series[0]?.data).toStrictEqual([
      { date: DATES[0], count: 10, previous: { value: 20, change: -50, diff: 50, state: "negative" } },
      { date: DATES[1], count: 20, previous: { value: 0, change: null, diff: null, state: "positive" } },
      { date: DATES[2], count: 30, previous: { value: 30, change: 0, diff: null, state: "neutral" } },
    ]);
  });

  it("compares each series' summaries with the previous period's", () => {
    // previous 20 0 30: sum 50, mean 16.67, min 0, max 30; (20 - 16.67) / 16.67 = 19.98 % → 20
    expect(body.series[0]?.metrics).toStrictEqual({
      sum: 60,
      average: 20,
      min: 10,
      max: 30,
      previous: {
        sum: { value: 50, change: 20, diff: 20, state: "positive" },
        average: { value: 16.67, change: 20, diff: 20, state: "positive" },
        min: { value: 0, change: null, diff: null, state: "positive" },
        max: { value: 30, change: 0, diff: null, state: "neutral" },
      },
    });
    const halved = { value: 2, change: -50, diff: 50, state: "negative" };
    expect(body.series[1]?.metrics.previous).toStrictEqual({
      sum: { value: 6, change: -50, diff: 50, state: "negative" },
      average: halved,
      min: halved,
      max: halved,
    });
  });

  it("compares the top-level summaries over every series' previous buckets", () => {
    // current 10 20 30 1 1 1: sum 63, mean 10.5; previous 20 0 30 2 2 2: sum 56, mean 9.33.
    // 7 / 56 = 12.5 %; (10.50 - 9.33) / 9.33 = 12.54 % → 12.5
    expect(body.metrics).toStrictEqual({
      sum: 63,
      average: 10.5,
      min: 1,
      max: 30,
      previous: {
        sum: { value: 56, change: 12.5, diff: 12.5, state: "positive" },
        average: { value: 9.33, change: 12.5, diff: 12.5, state: "positive" },
        min: { value: 0, change: null, diff: null, state: "positive" },
        max: { value: 30, change: 0, diff: null, state: "neutral" },
      },
    });
  });

  it("takes every breakdown group's previous buckets into the top-level comparison", () => {
    const split = chartBody(chartRequest(["screen_view"], { breakdowns: ["country"], previous: true }), [
      {
        groups: [
          group(["NO"], ["1", "1", "1"], ["2", "0", "0"]),
          group(["SE"], ["0", "0", "3"], ["0", "4", "0"]),
        ],
        truncated: false,
      },
    ]);
    // current 1 1 1 0 0 3: sum 6, mean 1, min 0, max 3; previous 2 0 0 0 4 0: sum 6, mean 1, min 0, max 4.
    expect(split.metrics.previous).toStrictEqual({
      sum: { value: 6, change: 0, diff: null, state: "neutral" },
      average: { value: 1, change: 0, diff: null, state: "neutral" },
      min: { value: 0, change: null, diff: null, state: "neutral" },
      max: { value: 4, change: -25, diff: 25, state: "negative" },
    });
  });

  it("states the previous window in the meta", () => {
    expect(body.meta).toStrictEqual({ ...META, truncated: false, previous: PREVIOUS_META });
  });

  it("leaves a bucket without a partner when the previous period has fewer", () => {
    const short = chartBody(chartRequest(["screen_view"], { previous: true }), [
      { groups: [group([], ["1", "2", "3"], ["4", "4"])], truncated: false },
    ]);
    expect(short.series[0]?.data).toStrictEqual([
      { date: DATES[0], count: 1, previous: { value: 4, change: -75, diff: 75, state: "negative" } },
      { date: DATES[1], count: 2, previous: { value: 4, change: -50, diff: 50, state: "negative" } },
      { date: DATES[2], count: 3 },
    ]);
  });
});

describe("chartBody with no groups", () => {
  it("answers no series, zero summaries and the meta", () => {
    const body = chartBody(chartRequest(["screen_view"], { breakdowns: ["country"] }), [
      { groups: [], truncated: false },
    ]);
    expect(body).toStrictEqual({
      series: [],
      metrics: { sum: 0, average: 0, min: 0, max: 0 },
      meta: { ...META, truncated: false },
    });
  });

  it("compares zeros with zeros when a previous period was asked", () => {
    const body = chartBody(chartRequest(["screen_view"], { previous: true }), [
      { groups: [], truncated: false },
    ]);
    const zero = { value: 0, change: null, diff: null, state: "neutral" };
    expect(body.metrics).toStrictEqual({
      sum: 0,
      average: 0,
      min: 0,
      max: 0,
      previous: { sum: zero, average: zero, min: zero, max: zero },
    });
    expect(body.meta).toStrictEqual({ ...META, truncated: false, previous: PREVIOUS_META });
  });
});
