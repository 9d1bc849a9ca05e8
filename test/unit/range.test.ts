import { describe, expect, it } from "vitest";
import type { Interval } from "../../src/lib/buckets";
import {
  parseDateBound,
  RANGE_PRESETS,
  type RangeInput,
  type RangePreset,
  resolveRange,
} from "../../src/lib/range";
import { at, expectInvalid, iso, isoList, resolve } from "../support/range-cases";

// The range's presets, explicit dates, intervals and the years it can store; its buckets and
// previous period are in range-buckets.test.ts. Every expected value was worked out by hand from
// the 2026 tz rules, never by the code under test.

type PresetCase = [preset: Exclude<RangePreset, "custom">, start: string, end: string];

describe("presets", () => {
  it("covers every preset of the contract", () => {
    expect(RANGE_PRESETS).toEqual([
      "30min",
      "lastHour",
      "last24h",
      "today",
      "yesterday",
      "7d",
      "30d",
      "3m",
      "6m",
      "12m",
      "monthToDate",
      "lastMonth",
      "yearToDate",
      "lastYear",
      "custom",
    ]);
  });

  const utcCases: PresetCase[] = [
    ["30min", "2026-11-21T09:47:00.000Z", "2026-11-21T10:18:00.000Z"],
    ["lastHour", "2026-11-21T09:17:00.000Z", "2026-11-21T10:18:00.000Z"],
    ["last24h", "2026-11-20T10:17:00.000Z", "2026-11-21T10:18:00.000Z"],
    ["today", "2026-11-21T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["yesterday", "2026-11-20T00:00:00.000Z", "2026-11-21T00:00:00.000Z"],
    ["7d", "2026-11-14T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["30d", "2026-10-22T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["3m", "2026-08-01T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["6m", "2026-05-01T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["12m", "2025-11-01T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["monthToDate", "2026-11-01T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["lastMonth", "2026-10-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z"],
    ["yearToDate", "2026-01-01T00:00:00.000Z", "2026-11-22T00:00:00.000Z"],
    ["lastYear", "2025-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"],
  ];

  it.each(utcCases)("%s in UTC", (range, start, end) => {
    const resolved = resolve({ range });
    expect(iso(resolved.window.start)).toBe(start);
    expect(iso(resolved.window.end)).toBe(end);
    expect(resolved.meta.timezone).toBe("UTC");
    expect(resolved.meta.startDate).toBe(start.replace(".000Z", "Z"));
    expect(resolved.meta.endDate).toBe(new Date(at(end) - 1).toISOString());
  });

  // [preset, meta.startDate, meta.endDate]: Oslo is +02:00 until 2026-10-25 and +01:00 after.
  const osloCases: PresetCase[] = [
    ["30min", "2026-11-21T10:47:00+01:00", "2026-11-21T11:17:59.999+01:00"],
    ["lastHour", "2026-11-21T10:17:00+01:00", "2026-11-21T11:17:59.999+01:00"],
    ["last24h", "2026-11-20T11:17:00+01:00", "2026-11-21T11:17:59.999+01:00"],
    ["today", "2026-11-21T00:00:00+01:00", "2026-11-21T23:59:59.999+01:00"],
    ["yesterday", "2026-11-20T00:00:00+01:00", "2026-11-20T23:59:59.999+01:00"],
    ["7d", "2026-11-14T00:00:00+01:00", "2026-11-21T23:59:59.999+01:00"],
    ["30d", "2026-10-22T00:00:00+02:00", "2026-11-21T23:59:59.999+01:00"],
    ["3m", "2026-08-01T00:00:00+02:00", "2026-11-21T23:59:59.999+01:00"],
    ["6m", "2026-05-01T00:00:00+02:00", "2026-11-21T23:59:59.999+01:00"],
    ["12m", "2025-11-01T00:00:00+01:00", "2026-11-21T23:59:59.999+01:00"],
    ["monthToDate", "2026-11-01T00:00:00+01:00", "2026-11-21T23:59:59.999+01:00"],
    ["lastMonth", "2026-10-01T00:00:00+02:00", "2026-10-31T23:59:59.999+01:00"],
    ["yearToDate", "2026-01-01T00:00:00+01:00", "2026-11-21T23:59:59.999+01:00"],
    ["lastYear", "2025-01-01T00:00:00+01:00", "2025-12-31T23:59:59.999+01:00"],
  ];

  it.each(osloCases)("%s in Europe/Oslo", (range, startDate, endDate) => {
    const resolved = resolve({ range, timezone: "Europe/Oslo" });
    expect(resolved.meta).toEqual({ startDate, endDate, timezone: "Europe/Oslo", interval: "day" });
    // The meta strings are the window: the start exactly, the end as its last millisecond.
    expect(resolved.window.start).toBe(at(startDate));
    expect(resolved.window.end).toBe(at(endDate) + 1);
  });

  // New York is on EDT (-04:00) until 2026-11-01 02:00 and on EST (-05:00) after; 2025-11-01 was still EDT.
  const newYorkCases: PresetCase[] = [
    ["30min", "2026-11-21T04:47:00-05:00", "2026-11-21T05:17:59.999-05:00"],
    ["lastHour", "2026-11-21T04:17:00-05:00", "2026-11-21T05:17:59.999-05:00"],
    ["last24h", "2026-11-20T05:17:00-05:00", "2026-11-21T05:17:59.999-05:00"],
    ["today", "2026-11-21T00:00:00-05:00", "2026-11-21T23:59:59.999-05:00"],
    ["yesterday", "2026-11-20T00:00:00-05:00", "2026-11-20T23:59:59.999-05:00"],
    ["7d", "2026-11-14T00:00:00-05:00", "2026-11-21T23:59:59.999-05:00"],
    ["30d", "2026-10-22T00:00:00-04:00", "2026-11-21T23:59:59.999-05:00"],
    ["3m", "2026-08-01T00:00:00-04:00", "2026-11-21T23:59:59.999-05:00"],
    ["6m", "2026-05-01T00:00:00-04:00", "2026-11-21T23:59:59.999-05:00"],
    ["12m", "2025-11-01T00:00:00-04:00", "2026-11-21T23:59:59.999-05:00"],
    ["monthToDate", "2026-11-01T00:00:00-04:00", "2026-11-21T23:59:59.999-05:00"],
    ["lastMonth", "2026-10-01T00:00:00-04:00", "2026-10-31T23:59:59.999-04:00"],
    ["yearToDate", "2026-01-01T00:00:00-05:00", "2026-11-21T23:59:59.999-05:00"],
    ["lastYear", "2025-01-01T00:00:00-05:00", "2025-12-31T23:59:59.999-05:00"],
  ];

  it.each(newYorkCases)("%s in America/New_York", (range, startDate, endDate) => {
    const resolved = resolve({ range, timezone: "America/New_York" });
    expect(resolved.meta.startDate).toBe(startDate);
    expect(resolved.meta.endDate).toBe(endDate);
    expect(resolved.window.start).toBe(at(startDate));
    expect(resolved.window.end).toBe(at(endDate) + 1);
  });

  it("7d at 2026-11-21T10:00Z in Europe/Oslo", () => {
    const resolved = resolveRange({
      range: "7d",
      timezone: "Europe/Oslo",
      now: new Date("2026-11-21T10:00:00Z"),
    });
    expect(resolved.meta.startDate).toBe("2026-11-14T00:00:00+01:00");
    expect(resolved.meta.endDate).toBe("2026-11-21T23:59:59.999+01:00");
    expect(resolved.interval).toBe("day");
    expect(isoList(resolved.buckets)).toEqual([
      "2026-11-13T23:00:00.000Z",
      "2026-11-14T23:00:00.000Z",
      "2026-11-15T23:00:00.000Z",
      "2026-11-16T23:00:00.000Z",
      "2026-11-17T23:00:00.000Z",
      "2026-11-18T23:00:00.000Z",
      "2026-11-19T23:00:00.000Z",
      "2026-11-20T23:00:00.000Z",
    ]);
  });

  it("defaults to 7d, or to defaultRange", () => {
    expect(resolve({}).meta.startDate).toBe("2026-11-14T00:00:00Z");
    expect(resolve({ defaultRange: "30d" }).meta.startDate).toBe("2026-10-22T00:00:00Z");
    expect(resolve({ range: "today", defaultRange: "30d" }).meta.startDate).toBe("2026-11-21T00:00:00Z");
  });

  it("lets both dates win over range", () => {
    const resolved = resolve({ range: "today", startDate: "2026-01-05", endDate: "2026-01-06" });
    expect(iso(resolved.window.start)).toBe("2026-01-05T00:00:00.000Z");
    expect(iso(resolved.window.end)).toBe("2026-01-07T00:00:00.000Z");
  });
});

describe("explicit dates", () => {
  it("makes a date-only end cover that whole local day", () => {
    const resolved = resolve({ startDate: "2026-11-01", endDate: "2026-11-03" });
    expect(iso(resolved.window.end)).toBe("2026-11-04T00:00:00.000Z");
    expect(resolved.meta.endDate).toBe("2026-11-03T23:59:59.999Z");
    expect(resolved.buckets).toHaveLength(3);

    const oslo = resolve({ startDate: "2026-11-01", endDate: "2026-11-01", timezone: "Europe/Oslo" });
    expect(iso(oslo.window.start)).toBe("2026-10-31T23:00:00.000Z");
    expect(iso(oslo.window.end)).toBe("2026-11-01T23:00:00.000Z");
  });

  it("reads local date-times in the timezone and RFC 3339 as absolute instants", () => {
    const tz = "Europe/Oslo";
    expect(iso(parseDateBound("2026-11-03 12:00:00", tz, "start", "startDate"))).toBe(
      "2026-11-03T11:00:00.000Z",
    );
    expect(iso(parseDateBound("2026-11-03T12:00:00", tz, "start", "startDate"))).toBe(
      "2026-11-03T11:00:00.000Z",
    );
    expect(iso(parseDateBound("2026-11-03 12:00:00.250", tz, "start", "s"))).toBe("2026-11-03T11:00:00.250Z");
    expect(iso(parseDateBound("2026-11-03T12:00:00Z", tz, "start", "s"))).toBe("2026-11-03T12:00:00.000Z");
    expect(iso(parseDateBound("2026-11-03T12:00:00-03:30", tz, "start", "s"))).toBe(
      "2026-11-03T15:30:00.000Z",
    );
    // An unencoded `+` in a query string arrives as a space.
    expect(iso(parseDateBound("2026-11-03T12:00:00 01:00", tz, "start", "s"))).toBe(
      "2026-11-03T11:00:00.000Z",
    );
  });

  it("makes an end inclusive at the precision it was given in", () => {
    const tz = "Europe/Oslo";
    expect(iso(parseDateBound("2026-11-03", tz, "end", "e"))).toBe("2026-11-03T23:00:00.000Z");
    expect(iso(parseDateBound("2026-11-03 12:00:00", tz, "end", "e"))).toBe("2026-11-03T11:00:01.000Z");
    expect(iso(parseDateBound("2026-11-03 12:00:00.250", tz, "end", "e"))).toBe("2026-11-03T11:00:00.251Z");
    expect(iso(parseDateBound("2026-11-03T12:00:00Z", tz, "end", "e"))).toBe("2026-11-03T12:00:01.000Z");
    expect(iso(parseDateBound("2026-10-25T23:59:59.999+01:00", tz, "end", "e"))).toBe(
      "2026-10-25T23:00:00.000Z",
    );
  });

  it("round-trips meta: feeding startDate and endDate back gives the same window", () => {
    const first = resolve({ range: "30d", timezone: "Europe/Oslo" });
    const again = resolve({
      startDate: first.meta.startDate,
      endDate: first.meta.endDate,
      timezone: "Europe/Oslo",
    });
    expect(again.window).toEqual(first.window);
  });

  it("moves a local time in a DST gap forward and takes the earlier of a repeated one", () => {
    expect(iso(parseDateBound("2026-03-29 02:30:00", "Europe/Oslo", "start", "s"))).toBe(
      "2026-03-29T01:30:00.000Z",
    );
    expect(iso(parseDateBound("2026-10-25 02:30:00", "Europe/Oslo", "start", "s"))).toBe(
      "2026-10-25T00:30:00.000Z",
    );
  });

  it.each([
    ["2026-02-30", "not a calendar date"],
    ["2026-02-29", "not a calendar date"],
    ["2026-13-01", "not a calendar date"],
    ["2026-1-01", "must be"],
    ["yesterday", "must be"],
    ["2026-11-01T10:00", "must be"],
    ["2026-11-01T24:00:00Z", "not a valid time of day"],
    ["2026-11-01T10:00:00+25:00", "invalid UTC offset"],
  ])("refuses %s naming the parameter", (value, message) => {
    const error = expectInvalid(() => resolve({ startDate: value, endDate: "2026-12-01" }), "startDate");
    expect(error.message).toContain(message);
    expectInvalid(() => resolve({ startDate: "2026-01-01", endDate: value }), "endDate");
  });

  it("accepts 2028-02-29, a leap day", () => {
    expect(iso(resolve({ startDate: "2028-02-29", endDate: "2028-02-29" }).window.end)).toBe(
      "2028-03-01T00:00:00.000Z",
    );
  });

  it("refuses a lone bound, naming the missing one", () => {
    const error = expectInvalid(() => resolve({ startDate: "2026-11-01" }), "endDate");
    expect(error.message).toBe("endDate is required when startDate is given.");
    expectInvalid(() => resolve({ endDate: "2026-11-01", range: "7d" }), "startDate");
    expectInvalid(
      () => resolve({ startDate: "2026-11-01", paramNames: { start: "start", end: "end" } }),
      "end",
    );
  });

  it("treats empty values as absent", () => {
    expect(resolve({ startDate: "", endDate: " ", range: "today" }).meta.startDate).toBe(
      "2026-11-21T00:00:00Z",
    );
  });

  it("refuses a start after the end", () => {
    expectInvalid(() => resolve({ startDate: "2026-11-02", endDate: "2026-11-01" }), "startDate");
    expectInvalid(
      () => resolve({ startDate: "2026-11-01T10:00:00.500Z", endDate: "2026-11-01T10:00:00.499Z" }),
      "startDate",
    );
    // The same day on both sides is one whole day.
    expect(resolve({ startDate: "2026-11-02", endDate: "2026-11-02" }).buckets).toHaveLength(1);
  });

  it("keeps a window of up to two years as asked, whatever the project's history", () => {
    const firstEventAt = Date.parse("2025-06-01T12:00:00Z");
    const two = resolve({
      startDate: "2024-01-01",
      endDate: "2025-12-31",
      timezone: "Europe/Oslo",
      interval: "month",
      firstEventAt,
    });
    expect(two.buckets).toHaveLength(24);
    expect(two.meta.startDate).toBe("2024-01-01T00:00:00+01:00");
    expect(two.meta.requestedStartDate).toBeUndefined();
  });

  it("starts a window over two years ('all time') at the local day of the project's first event", () => {
    // 22:30 UTC on 15 September is 00:30 on the 16th in Oslo: the window starts at that local midnight.
    const firstEventAt = Date.parse("2026-09-15T22:30:00Z");
    const all = resolve({
      startDate: "1970-01-01",
      endDate: "2026-11-21",
      timezone: "Europe/Oslo",
      firstEventAt,
    });
    expect(all.window).toEqual({
      start: Date.parse("2026-09-15T22:00:00Z"),
      end: Date.parse("2026-11-21T23:00:00Z"),
    });
    expect(all.meta.startDate).toBe("2026-09-16T00:00:00+02:00");
    expect(all.meta.requestedStartDate).toBe("1970-01-01T00:00:00+01:00");
    // Daily buckets of the data's 67 days, not of 56 years (which would exceed 2,000).
    expect(all.buckets).toHaveLength(67);
    // The previous period is as long as the clamped window, just before it.
    const withPrevious = resolve({
      startDate: "1970-01-01",
      endDate: "2026-11-21",
      timezone: "Europe/Oslo",
      firstEventAt,
      previous: true,
    });
    expect(withPrevious.previous?.buckets).toHaveLength(67);
    expect(withPrevious.previous?.window.end).toBe(all.window.start);
  });

  it("keeps a long window when the history is unknown, empty or starts after it; the bucket limit still holds", () => {
    for (const firstEventAt of [undefined, null, Date.parse("2030-01-01T00:00:00Z")]) {
      const monthly = resolve({
        startDate: "1970-01-01",
        endDate: "2026-11-21",
        interval: "month",
        firstEventAt,
      });
      expect(monthly.meta.startDate).toBe("1970-01-01T00:00:00Z");
      expect(monthly.meta.requestedStartDate).toBeUndefined();
      expect(monthly.buckets).toHaveLength(683);
      const error = expectInvalid(
        () => resolve({ startDate: "1970-01-01", endDate: "2026-11-21", firstEventAt }),
        "interval",
      );
      expect(error.message).toContain("exceed the maximum of 2000");
    }
  });

  it("clamps nothing when the history starts before the window", () => {
    const long = resolve({
      startDate: "2020-01-01",
      endDate: "2026-11-21",
      interval: "month",
      firstEventAt: Date.parse("2019-05-01T00:00:00Z"),
    });
    expect(long.meta.startDate).toBe("2020-01-01T00:00:00Z");
    expect(long.meta.requestedStartDate).toBeUndefined();
  });

  it("needs dates for range=custom", () => {
    expectInvalid(() => resolve({ range: "custom" }), "startDate");
    expect(resolve({ range: "custom", startDate: "2026-11-01", endDate: "2026-11-02" }).buckets).toHaveLength(
      2,
    );
  });

  it("refuses an unknown timezone", () => {
    for (const timezone of ["Mars/Olympus_Mons", "", "+01:00", "Europe/Oslo "]) {
      const error = expectInvalid(() => resolve({ timezone }), "timezone");
      expect(error.message).toContain("IANA");
    }
    expectInvalid(() => parseDateBound("2026-11-01", "Nowhere/Special", "start", "start"), "timezone");
  });
});

describe("intervals", () => {
  it("defaults to day without autoInterval, and an explicit interval wins", () => {
    expect(resolve({ range: "today" }).interval).toBe("day");
    expect(resolve({ range: "today", autoInterval: true, interval: "minute" }).interval).toBe("minute");
  });

  it.each<[Partial<RangeInput>, Interval]>([
    [{ range: "today" }, "hour"],
    [{ range: "yesterday" }, "hour"],
    [{ startDate: "2026-11-01 10:00:00", endDate: "2026-11-01 18:00:00" }, "hour"],
    [{ range: "7d" }, "day"],
    [{ range: "30d" }, "day"],
    [{ startDate: "2026-01-01", endDate: "2026-04-02" }, "day"], // 92 days
    [{ startDate: "2026-01-01", endDate: "2026-04-03" }, "week"], // 93 days
    [{ range: "3m" }, "week"], // 2026-08-01 .. 2026-11-21: 113 days
    [{ startDate: "2026-01-01", endDate: "2026-07-05" }, "week"], // 186 days
    [{ startDate: "2026-01-01", endDate: "2026-07-06" }, "month"], // 187 days
    [{ range: "12m" }, "month"],
  ])("picks automatically for %o", (input, interval) => {
    expect(resolve({ ...input, autoInterval: true }).interval).toBe(interval);
  });

  it("refuses more than 2000 buckets, naming a coarser interval that fits", () => {
    const hours = expectInvalid(
      () => resolve({ startDate: "2026-01-01", endDate: "2026-03-31", interval: "hour" }),
      "interval",
    );
    expect(hours.message).toBe(
      "2,160 hourly buckets exceed the maximum of 2000; use interval=day or coarser",
    );
    const minutes = expectInvalid(
      () => resolve({ startDate: "2026-11-20", endDate: "2026-11-21", interval: "minute" }),
      "interval",
    );
    expect(minutes.message).toBe(
      "2,880 per-minute buckets exceed the maximum of 2000; use interval=hour or coarser",
    );
  });

  it("allows exactly 2000 buckets", () => {
    const input = { startDate: "2026-11-21T00:00:00Z", interval: "minute" as const };
    expect(resolve({ ...input, endDate: "2026-11-22T09:19:59Z" }).buckets).toHaveLength(2000);
    const error = expectInvalid(() => resolve({ ...input, endDate: "2026-11-22T09:20:00Z" }), "interval");
    expect(error.message).toContain("2,001 per-minute buckets");
  });
});

describe("the years the API can store (1–9999 in UTC)", () => {
  it("accepts windows that end by the last millisecond of 9999 and start at year 1 in UTC", () => {
    const last = resolve({ startDate: "9999-12-29", endDate: "9999-12-30" });
    expect(iso(last.window.end)).toBe("9999-12-31T00:00:00.000Z");
    const upToTheEnd = resolve({ startDate: "9999-12-31T00:00:00Z", endDate: "9999-12-31T23:59:59.998Z" });
    expect(iso(upToTheEnd.window.end)).toBe("9999-12-31T23:59:59.999Z");
    const first = resolve({ startDate: "0001-01-01", endDate: "0001-01-02" });
    expect(iso(first.window.start)).toBe("0001-01-01T00:00:00.000Z");
  });

  it("refuses a window whose exclusive end falls in year 10000", () => {
    const error = expectInvalid(() => resolve({ startDate: "9999-12-01", endDate: "9999-12-31" }), "endDate");
    expect(error.message).toContain("0001-01-01 and 9999-12-31");
    expectInvalid(
      () => resolve({ startDate: "9999-12-31T00:00:00Z", endDate: "9999-12-31T23:59:59.999Z" }),
      "endDate",
    );
  });

  it("refuses a start before year 1 in UTC (year 1 in a zone east of UTC)", () => {
    expectInvalid(
      () => resolve({ startDate: "0001-01-01", endDate: "0001-01-02", timezone: "Asia/Tokyo" }),
      "startDate",
    );
  });

  it("refuses a previous period that would start before year 1", () => {
    expect(
      resolve({ startDate: "0001-01-08", endDate: "0001-01-14", previous: true }).previous,
    ).toBeDefined();
    expectInvalid(
      () => resolve({ startDate: "0001-01-01", endDate: "0001-01-07", previous: true }),
      "previous",
    );
  });
});
