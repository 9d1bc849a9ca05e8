import { describe, expect, it } from "vitest";
import { dayParts } from "../../src/queries/insights/day-parts";

// Expected parts worked out by hand: Oslo moves to summer time on 2026-03-29 (a 23-hour day).
const at = (text: string) => Date.parse(text);
const iso = (parts: { start: number; end: number }[]) =>
  parts.map(({ start, end }) => [new Date(start).toISOString(), new Date(end).toISOString()]);

describe("dayParts", () => {
  it("keeps a window of fewer than two weeks whole", () => {
    const window = { start: at("2026-11-01T00:00:00Z"), end: at("2026-11-14T00:00:00Z") };
    expect(dayParts(window, "UTC")).toEqual([window]);
    const day = { start: at("2026-11-01T00:00:00Z"), end: at("2026-11-02T00:00:00Z") };
    expect(dayParts(day, "UTC")).toEqual([day]);
  });

  it("cuts two weeks or more into two runs of whole days, the first no longer than the second", () => {
    expect(
      iso(dayParts({ start: at("2026-11-01T00:00:00Z"), end: at("2026-11-15T00:00:00Z") }, "UTC")),
    ).toEqual([
      ["2026-11-01T00:00:00.000Z", "2026-11-08T00:00:00.000Z"],
      ["2026-11-08T00:00:00.000Z", "2026-11-15T00:00:00.000Z"],
    ]);
    expect(
      iso(dayParts({ start: at("2026-08-30T00:00:00Z"), end: at("2026-11-28T00:00:00Z") }, "UTC")),
    ).toEqual([
      ["2026-08-30T00:00:00.000Z", "2026-10-14T00:00:00.000Z"],
      ["2026-10-14T00:00:00.000Z", "2026-11-28T00:00:00.000Z"],
    ]);
    expect(
      iso(dayParts({ start: at("2026-11-01T00:00:00Z"), end: at("2026-11-16T00:00:00Z") }, "UTC")),
    ).toEqual([
      ["2026-11-01T00:00:00.000Z", "2026-11-08T00:00:00.000Z"],
      ["2026-11-08T00:00:00.000Z", "2026-11-16T00:00:00.000Z"],
    ]);
  });

  it("cuts at the project's local midnight across a change of its clocks", () => {
    // 2026-03-20 – 2026-04-05 in Oslo: 16 local days, the 29th 23 hours long; the cut after 8 days.
    const window = { start: at("2026-03-19T23:00:00Z"), end: at("2026-04-04T22:00:00Z") };
    expect(iso(dayParts(window, "Europe/Oslo"))).toEqual([
      ["2026-03-19T23:00:00.000Z", "2026-03-27T23:00:00.000Z"],
      ["2026-03-27T23:00:00.000Z", "2026-04-04T22:00:00.000Z"],
    ]);
  });
});
