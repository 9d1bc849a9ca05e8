import { describe, expect, it } from "vitest";
import { dayParts } from "../../src/queries/insights/day-parts";

// Expected parts worked out by hand: Oslo moves to summer time on 2026-03-29 (a 23-hour day).
const at = (text: string) => Date.parse(text);
const dates = (parts: { start: number; end: number; days?: readonly number[] }[]) =>
  parts.map(({ days }) => (days ?? []).map((day) => new Date(day).toISOString().slice(0, 16)));

describe("dayParts", () => {
  it("keeps a window of fewer than two weeks whole", () => {
    const window = { start: at("2026-11-01T00:00:00Z"), end: at("2026-11-14T00:00:00Z") };
    expect(dayParts(window, "UTC")).toEqual([window]);
    const day = { start: at("2026-11-01T00:00:00Z"), end: at("2026-11-02T00:00:00Z") };
    expect(dayParts(day, "UTC")).toEqual([day]);
  });

  it("deals two weeks or more out to two parts in turn, each part spanning the window", () => {
    const window = { start: at("2026-11-01T00:00:00Z"), end: at("2026-11-15T00:00:00Z") };
    const parts = dayParts(window, "UTC");
    expect(parts.map(({ start, end }) => ({ start, end }))).toEqual([window, window]);
    expect(dates(parts)).toEqual([
      ["01", "03", "05", "07", "09", "11", "13"].map((day) => `2026-11-${day}T00:00`),
      ["02", "04", "06", "08", "10", "12", "14"].map((day) => `2026-11-${day}T00:00`),
    ]);
    // 15 days: the first part holds the odd one.
    const fifteen = dates(dayParts({ start: window.start, end: at("2026-11-16T00:00:00Z") }, "UTC"));
    expect(fifteen.map((days) => days.length)).toEqual([8, 7]);
    expect(fifteen[0]?.at(-1)).toBe("2026-11-15T00:00");
    // 90 days: 45 each, every day once.
    const quarter = dayParts({ start: at("2026-08-30T00:00:00Z"), end: at("2026-11-28T00:00:00Z") }, "UTC");
    expect(quarter.map(({ days }) => days?.length)).toEqual([45, 45]);
    expect(new Set(quarter.flatMap(({ days }) => days ?? [])).size).toBe(90);
  });

  it("deals out the project's local midnights across a change of its clocks", () => {
    // 2026-03-20 – 2026-04-05 in Oslo: 16 local days, the 29th 23 hours long (its midnight at 23:00
    // UTC, the next at 22:00 UTC).
    const window = { start: at("2026-03-19T23:00:00Z"), end: at("2026-04-04T22:00:00Z") };
    expect(dates(dayParts(window, "Europe/Oslo"))).toEqual([
      [
        "2026-03-19T23:00",
        "2026-03-21T23:00",
        "2026-03-23T23:00",
        "2026-03-25T23:00",
        "2026-03-27T23:00",
        "2026-03-29T22:00",
        "2026-03-31T22:00",
        "2026-04-02T22:00",
      ],
      [
        "2026-03-20T23:00",
        "2026-03-22T23:00",
        "2026-03-24T23:00",
        "2026-03-26T23:00",
        "2026-03-28T23:00",
        "2026-03-30T22:00",
        "2026-04-01T22:00",
        "2026-04-03T22:00",
      ],
    ]);
  });
});
