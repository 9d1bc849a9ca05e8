import { describe, expect, it } from "vitest";
import { bucketIndex, bucketStarts, countBuckets } from "../../src/lib/buckets";
import { resolveRange } from "../../src/lib/range";
import { formatInstant, startOfLocalWeek } from "../../src/lib/timezone";
import { at, HOUR, iso, isoList, resolve } from "../support/range-cases";

// A range's buckets and its previous period (the rest of the range in range.test.ts). Every
// expected value was worked out by hand from the 2026 tz rules, never by the code under test.

describe("buckets", () => {
  it("has 23 hour buckets on the Oslo spring-forward day and 25 on the fall-back day", () => {
    const spring = resolve({
      startDate: "2026-03-29",
      endDate: "2026-03-29",
      timezone: "Europe/Oslo",
      interval: "hour",
    });
    expect(iso(spring.window.start)).toBe("2026-03-28T23:00:00.000Z");
    expect(spring.window.end - spring.window.start).toBe(23 * HOUR);
    expect(spring.buckets).toHaveLength(23);
    expect(spring.buckets.slice(0, 3).map((b) => formatInstant(b, "Europe/Oslo"))).toEqual([
      "2026-03-29T00:00:00+01:00",
      "2026-03-29T01:00:00+01:00",
      "2026-03-29T03:00:00+02:00",
    ]);
    expect(spring.meta.endDate).toBe("2026-03-29T23:59:59.999+02:00");

    const fall = resolve({
      startDate: "2026-10-25",
      endDate: "2026-10-25",
      timezone: "Europe/Oslo",
      interval: "hour",
    });
    expect(fall.window.end - fall.window.start).toBe(25 * HOUR);
    expect(fall.buckets).toHaveLength(25);
    expect(fall.buckets.slice(1, 5).map((b) => formatInstant(b, "Europe/Oslo"))).toEqual([
      "2026-10-25T01:00:00+02:00",
      "2026-10-25T02:00:00+02:00",
      "2026-10-25T02:00:00+01:00",
      "2026-10-25T03:00:00+01:00",
    ]);
    expect(fall.meta).toEqual({
      startDate: "2026-10-25T00:00:00+02:00",
      endDate: "2026-10-25T23:59:59.999+01:00",
      timezone: "Europe/Oslo",
      interval: "hour",
    });
  });

  it("has day buckets of 23 and 25 hours on the Oslo DST days", () => {
    const spring = bucketStarts(
      { start: at("2026-03-27T23:00:00Z"), end: at("2026-03-30T22:00:00Z") },
      "day",
      "Europe/Oslo",
    );
    expect(isoList(spring)).toEqual([
      "2026-03-27T23:00:00.000Z",
      "2026-03-28T23:00:00.000Z",
      "2026-03-29T22:00:00.000Z",
    ]);
    expect((spring[2] ?? 0) - (spring[1] ?? 0)).toBe(23 * HOUR);

    const fall = resolve({ startDate: "2026-10-24", endDate: "2026-10-26", timezone: "Europe/Oslo" });
    expect(isoList(fall.buckets)).toEqual([
      "2026-10-23T22:00:00.000Z",
      "2026-10-24T22:00:00.000Z",
      "2026-10-25T23:00:00.000Z",
    ]);
    expect((fall.buckets[2] ?? 0) - (fall.buckets[1] ?? 0)).toBe(25 * HOUR);
  });

  it("follows the America/New_York DST changes", () => {
    const tz = "America/New_York";
    const spring = resolve({
      startDate: "2026-03-08",
      endDate: "2026-03-08",
      timezone: tz,
      interval: "hour",
    });
    expect(iso(spring.window.start)).toBe("2026-03-08T05:00:00.000Z");
    expect(iso(spring.window.end)).toBe("2026-03-09T04:00:00.000Z");
    expect(spring.buckets).toHaveLength(23);
    expect(spring.buckets.slice(1, 3).map((b) => formatInstant(b, tz))).toEqual([
      "2026-03-08T01:00:00-05:00",
      "2026-03-08T03:00:00-04:00",
    ]);

    const fall = resolve({ startDate: "2026-11-01", endDate: "2026-11-01", timezone: tz, interval: "hour" });
    expect(iso(fall.window.start)).toBe("2026-11-01T04:00:00.000Z");
    expect(iso(fall.window.end)).toBe("2026-11-02T05:00:00.000Z");
    expect(fall.buckets).toHaveLength(25);
    expect(fall.buckets.slice(1, 3).map((b) => formatInstant(b, tz))).toEqual([
      "2026-11-01T01:00:00-04:00",
      "2026-11-01T01:00:00-05:00",
    ]);

    const days = resolve({ startDate: "2026-10-31", endDate: "2026-11-02", timezone: tz });
    expect(isoList(days.buckets)).toEqual([
      "2026-10-31T04:00:00.000Z",
      "2026-11-01T04:00:00.000Z",
      "2026-11-02T05:00:00.000Z",
    ]);
  });

  it("starts Asia/Kolkata hour buckets at the local hour (+05:30)", () => {
    const tz = "Asia/Kolkata";
    const resolved = resolve({
      startDate: "2026-11-21 10:15:00",
      endDate: "2026-11-21 12:30:00",
      timezone: tz,
      interval: "hour",
    });
    expect(iso(resolved.window.start)).toBe("2026-11-21T04:45:00.000Z");
    expect(iso(resolved.window.end)).toBe("2026-11-21T07:00:01.000Z");
    expect(isoList(resolved.buckets)).toEqual([
      "2026-11-21T04:30:00.000Z",
      "2026-11-21T05:30:00.000Z",
      "2026-11-21T06:30:00.000Z",
    ]);
    expect(resolved.buckets.map((b) => formatInstant(b, tz))).toEqual([
      "2026-11-21T10:00:00+05:30",
      "2026-11-21T11:00:00+05:30",
      "2026-11-21T12:00:00+05:30",
    ]);
    // Asia/Kathmandu is +05:45.
    const kathmandu = bucketStarts(
      { start: at("2026-11-21T04:00:00Z"), end: at("2026-11-21T05:00:00Z") },
      "hour",
      "Asia/Kathmandu",
    );
    expect(isoList(kathmandu)).toEqual(["2026-11-21T03:15:00.000Z", "2026-11-21T04:15:00.000Z"]);
  });

  it("starts weeks on Monday", () => {
    // 2026-11-04 is a Wednesday, 2026-11-01 a Sunday.
    const weeks = resolve({ startDate: "2026-11-04", endDate: "2026-11-21", interval: "week" });
    expect(isoList(weeks.buckets)).toEqual([
      "2026-11-02T00:00:00.000Z",
      "2026-11-09T00:00:00.000Z",
      "2026-11-16T00:00:00.000Z",
    ]);
    const sunday = resolve({ startDate: "2026-11-01", endDate: "2026-11-02", interval: "week" });
    expect(isoList(sunday.buckets)).toEqual(["2026-10-26T00:00:00.000Z", "2026-11-02T00:00:00.000Z"]);
    // Across the Oslo fall-back the week of 2026-10-19 is 169 hours long.
    const oslo = resolve({
      startDate: "2026-10-20",
      endDate: "2026-11-03",
      timezone: "Europe/Oslo",
      interval: "week",
    });
    expect(isoList(oslo.buckets)).toEqual([
      "2026-10-18T22:00:00.000Z",
      "2026-10-25T23:00:00.000Z",
      "2026-11-01T23:00:00.000Z",
    ]);
    expect(iso(startOfLocalWeek(at("2026-11-22T22:59:59Z"), "Europe/Oslo"))).toBe("2026-11-15T23:00:00.000Z");
  });

  it("starts months on the local first of the month", () => {
    const oslo = resolve({
      startDate: "2026-09-15",
      endDate: "2026-11-10",
      timezone: "Europe/Oslo",
      interval: "month",
    });
    expect(isoList(oslo.buckets)).toEqual([
      "2026-08-31T22:00:00.000Z",
      "2026-09-30T22:00:00.000Z",
      "2026-10-31T23:00:00.000Z",
    ]);
  });

  it("lists minute buckets from the minute containing the start", () => {
    const resolved = resolve({ range: "30min", interval: "minute" });
    expect(resolved.buckets).toHaveLength(31);
    expect(iso(resolved.buckets[0] ?? 0)).toBe("2026-11-21T09:47:00.000Z");
    expect(iso(resolved.buckets[30] ?? 0)).toBe("2026-11-21T10:17:00.000Z");
  });

  it("counts buckets the same way it lists them", () => {
    const window = { start: at("2026-01-01T00:00:00Z"), end: at("2026-12-31T00:00:00Z") };
    for (const tz of ["UTC", "Europe/Oslo", "America/New_York", "Asia/Kolkata"]) {
      for (const interval of ["hour", "day", "week", "month"] as const) {
        expect(countBuckets(window, interval, tz)).toBe(bucketStarts(window, interval, tz).length);
      }
    }
  });

  it("keeps hour starts increasing where the offset moves by half an hour (Australia/Lord_Howe)", () => {
    // 2026-10-04 02:00 +10:30 becomes 02:30 +11:00; 2026-04-05 02:00 +11:00 becomes 01:30 +10:30.
    const tz = "Australia/Lord_Howe";
    const spring = bucketStarts(
      { start: at("2026-10-03T13:30:00Z"), end: at("2026-10-03T17:00:00Z") },
      "hour",
      tz,
    );
    expect(spring.map((b) => formatInstant(b, tz))).toEqual([
      "2026-10-04T00:00:00+10:30",
      "2026-10-04T01:00:00+10:30",
      "2026-10-04T02:30:00+11:00",
      "2026-10-04T03:00:00+11:00",
    ]);
    const fall = bucketStarts(
      { start: at("2026-04-04T13:00:00Z"), end: at("2026-04-04T17:00:00Z") },
      "hour",
      tz,
    );
    expect(fall.map((b) => formatInstant(b, tz))).toEqual([
      "2026-04-05T00:00:00+11:00",
      "2026-04-05T01:00:00+11:00",
      "2026-04-05T02:00:00+10:30",
      "2026-04-05T03:00:00+10:30",
    ]);
  });

  it("finds the bucket of an instant", () => {
    const buckets = [at("2026-11-01T00:00:00Z"), at("2026-11-02T00:00:00Z"), at("2026-11-03T00:00:00Z")];
    const end = at("2026-11-04T00:00:00Z");
    expect(bucketIndex(at("2026-10-31T23:59:59Z"), buckets, end)).toBe(-1);
    expect(bucketIndex(at("2026-11-01T00:00:00Z"), buckets, end)).toBe(0);
    expect(bucketIndex(at("2026-11-02T12:00:00Z"), buckets, end)).toBe(1);
    expect(bucketIndex(at("2026-11-03T23:59:59.999Z"), buckets, end)).toBe(2);
    expect(bucketIndex(end, buckets, end)).toBe(-1);
    expect(bucketIndex(end, [], end)).toBe(-1);
  });
});

describe("previous period", () => {
  it("spans the same local days for whole-day windows across a DST change", () => {
    // The week after the Oslo fall-back is 168 hours; the week before it, 169.
    const resolved = resolve({
      startDate: "2026-10-26",
      endDate: "2026-11-01",
      timezone: "Europe/Oslo",
      previous: true,
    });
    expect(iso(resolved.window.start)).toBe("2026-10-25T23:00:00.000Z");
    expect(iso(resolved.previous?.window.start ?? 0)).toBe("2026-10-18T22:00:00.000Z");
    expect(resolved.previous?.window.end).toBe(resolved.window.start);
    expect(isoList(resolved.previous?.buckets ?? [])).toEqual([
      "2026-10-18T22:00:00.000Z",
      "2026-10-19T22:00:00.000Z",
      "2026-10-20T22:00:00.000Z",
      "2026-10-21T22:00:00.000Z",
      "2026-10-22T22:00:00.000Z",
      "2026-10-23T22:00:00.000Z",
      "2026-10-24T22:00:00.000Z",
    ]);
    expect(resolved.buckets).toHaveLength(7);
  });

  it("pairs the contract's 7d example with the 8 days before it", () => {
    const resolved = resolveRange({
      range: "7d",
      timezone: "Europe/Oslo",
      now: new Date("2026-11-01T12:00:00Z"),
      previous: true,
    });
    expect(resolved.meta.startDate).toBe("2026-10-25T00:00:00+02:00");
    expect(resolved.meta.endDate).toBe("2026-11-01T23:59:59.999+01:00");
    expect(formatInstant(resolved.previous?.window.start ?? 0, "Europe/Oslo")).toBe(
      "2026-10-17T00:00:00+02:00",
    );
    expect(resolved.previous?.buckets).toHaveLength(8);
  });

  it("has the same duration for 30min", () => {
    const resolved = resolve({ range: "30min", interval: "minute", previous: true });
    expect(iso(resolved.previous?.window.start ?? 0)).toBe("2026-11-21T09:16:00.000Z");
    expect(iso(resolved.previous?.window.end ?? 0)).toBe("2026-11-21T09:47:00.000Z");
    expect(resolved.previous?.buckets).toHaveLength(31);
    expect(iso(resolved.previous?.buckets[0] ?? 0)).toBe("2026-11-21T09:16:00.000Z");
  });

  it("computes its buckets from its own window, so month counts may differ by one", () => {
    // October has 31 days; the 31 days before it start on 2026-08-31.
    const resolved = resolve({
      range: "lastMonth",
      timezone: "Europe/Oslo",
      interval: "month",
      previous: true,
    });
    expect(isoList(resolved.buckets)).toEqual(["2026-09-30T22:00:00.000Z"]);
    expect(iso(resolved.previous?.window.start ?? 0)).toBe("2026-08-30T22:00:00.000Z");
    expect(isoList(resolved.previous?.buckets ?? [])).toEqual([
      "2026-07-31T22:00:00.000Z",
      "2026-08-31T22:00:00.000Z",
    ]);
  });

  it("is absent unless asked for", () => {
    expect(resolve({ range: "7d" }).previous).toBeUndefined();
  });
});
