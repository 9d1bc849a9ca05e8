import { describe, expect, it } from "vitest";
import {
  addLocalDays,
  addLocalMonths,
  formatInstant,
  isValidTimeZone,
  offsetMinutes,
  zonedParts,
  zonedToInstant,
} from "../../src/lib/timezone";

// Every expected value below was worked out by hand from the 2026 tz rules, never by the code under test.

const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);

describe("timezone helpers", () => {
  it("formats instants in RFC 3339 with the zone's offset", () => {
    expect(formatInstant(at("2026-10-31T23:00:00Z"), "Europe/Oslo")).toBe("2026-11-01T00:00:00+01:00");
    expect(formatInstant(at("2026-10-25T22:59:59.999Z"), "Europe/Oslo", { milliseconds: true })).toBe(
      "2026-10-25T23:59:59.999+01:00",
    );
    expect(formatInstant(at("2026-07-01T12:00:00Z"), "Europe/Oslo")).toBe("2026-07-01T14:00:00+02:00");
    expect(formatInstant(at("2026-11-01T00:00:00Z"), "UTC")).toBe("2026-11-01T00:00:00Z");
    expect(formatInstant(at("2026-11-01T00:00:00Z"), "Etc/UTC", { milliseconds: true })).toBe(
      "2026-11-01T00:00:00.000Z",
    );
    expect(formatInstant(at("2026-01-15T12:00:00Z"), "Europe/London")).toBe("2026-01-15T12:00:00+00:00");
    expect(formatInstant(at("2026-01-15T12:00:00Z"), "America/St_Johns")).toBe("2026-01-15T08:30:00-03:30");
    expect(formatInstant(at("2026-01-15T12:00:00Z"), "Asia/Kathmandu")).toBe("2026-01-15T17:45:00+05:45");
    expect(formatInstant(at("2026-11-01T06:30:00Z"), "America/New_York")).toBe("2026-11-01T01:30:00-05:00");
  });

  it("gives local calendar fields with Monday = 1 and Sunday = 7", () => {
    expect(zonedParts(at("2026-11-21T10:17:42.123Z"), "Europe/Oslo")).toEqual({
      year: 2026,
      month: 11,
      day: 21,
      hour: 11,
      minute: 17,
      second: 42,
      millisecond: 123,
      weekday: 6,
    });
    expect(zonedParts(at("2026-11-22T23:30:00Z"), "Europe/Oslo").weekday).toBe(1);
    expect(zonedParts(at("2026-11-22T23:30:00Z"), "UTC").weekday).toBe(7);
    expect(zonedParts(at("2026-11-21T20:00:00Z"), "Asia/Kolkata")).toMatchObject({
      day: 22,
      hour: 1,
      minute: 30,
    });
  });

  it("turns local times into instants, moving gaps forward and taking the earlier of repeats", () => {
    const oslo = "Europe/Oslo";
    const ny = "America/New_York";
    expect(iso(zonedToInstant({ year: 2026, month: 11, day: 1 }, oslo))).toBe("2026-10-31T23:00:00.000Z");
    expect(iso(zonedToInstant({ year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, oslo))).toBe(
      "2026-03-29T01:30:00.000Z",
    );
    expect(iso(zonedToInstant({ year: 2026, month: 10, day: 25, hour: 2, minute: 30 }, oslo))).toBe(
      "2026-10-25T00:30:00.000Z",
    );
    expect(iso(zonedToInstant({ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, ny))).toBe(
      "2026-03-08T07:30:00.000Z",
    );
    expect(iso(zonedToInstant({ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, ny))).toBe(
      "2026-11-01T05:30:00.000Z",
    );
    expect(iso(zonedToInstant({ year: 2026, month: 1, day: 32, hour: 12, millisecond: 5 }, "UTC"))).toBe(
      "2026-02-01T12:00:00.005Z",
    );
  });

  it("gives offsets in minutes", () => {
    expect(offsetMinutes(at("2026-01-15T12:00:00Z"), "Europe/Oslo")).toBe(60);
    expect(offsetMinutes(at("2026-07-15T12:00:00Z"), "Europe/Oslo")).toBe(120);
    expect(offsetMinutes(at("2026-01-15T12:00:00Z"), "America/New_York")).toBe(-300);
    expect(offsetMinutes(at("2026-07-15T12:00:00Z"), "America/New_York")).toBe(-240);
    expect(offsetMinutes(at("2026-07-15T12:00:00Z"), "Asia/Kolkata")).toBe(330);
    // The instant Oslo falls back: 01:00Z is already +01:00.
    expect(offsetMinutes(at("2026-10-25T00:59:59Z"), "Europe/Oslo")).toBe(120);
    expect(offsetMinutes(at("2026-10-25T01:00:00Z"), "Europe/Oslo")).toBe(60);
  });

  it("adds local days and months keeping the wall clock", () => {
    const oslo = "Europe/Oslo";
    expect(iso(addLocalDays(at("2026-03-28T23:00:00Z"), 1, oslo))).toBe("2026-03-29T22:00:00.000Z");
    expect(iso(addLocalDays(at("2026-10-26T11:00:00Z"), -1, oslo))).toBe("2026-10-25T11:00:00.000Z");
    expect(iso(addLocalMonths(at("2026-01-31T12:00:00Z"), 1, "UTC"))).toBe("2026-02-28T12:00:00.000Z");
    expect(iso(addLocalMonths(at("2026-02-28T23:00:00Z"), 1, oslo))).toBe("2026-03-31T22:00:00.000Z");
  });

  it("steps from the start of a day without a midnight to the next day's midnight", () => {
    // Each zone moves 00:00 to 01:00 on its spring day, so that day starts at 01:00 local.
    const cases: Array<[zone: string, dayStart: string, nextMidnight: string, twoDaysOn: string]> = [
      [
        "America/Santiago",
        "2026-09-06T04:00:00.000Z",
        "2026-09-07T03:00:00.000Z",
        "2026-09-08T03:00:00.000Z",
      ],
      ["Asia/Beirut", "2026-03-28T22:00:00.000Z", "2026-03-29T21:00:00.000Z", "2026-03-30T21:00:00.000Z"],
      ["America/Havana", "2026-03-08T05:00:00.000Z", "2026-03-09T04:00:00.000Z", "2026-03-10T04:00:00.000Z"],
    ];
    for (const [zone, dayStart, nextMidnight, twoDaysOn] of cases) {
      expect({ zone, next: iso(addLocalDays(at(dayStart), 1, zone)) }).toEqual({ zone, next: nextMidnight });
      expect({ zone, next: iso(addLocalDays(at(dayStart), 2, zone)) }).toEqual({ zone, next: twoDaysOn });
      expect({ zone, back: iso(addLocalDays(at(nextMidnight), -1, zone)) }).toEqual({ zone, back: dayStart });
    }
    // Any other time keeps its wall clock: 12:00 on the Santiago day is 12:00 the next day.
    expect(iso(addLocalDays(at("2026-09-06T15:00:00Z"), 1, "America/Santiago"))).toBe(
      "2026-09-07T15:00:00.000Z",
    );
  });

  it("knows valid zone names", () => {
    expect(isValidTimeZone("Europe/Oslo")).toBe(true);
    expect(isValidTimeZone("europe/oslo")).toBe(true);
    expect(isValidTimeZone("UTC")).toBe(true);
    expect(isValidTimeZone("Etc/GMT+5")).toBe(true);
    expect(isValidTimeZone("Europe/Atlantis")).toBe(false);
    expect(isValidTimeZone("+01:00")).toBe(false);
    expect(isValidTimeZone("")).toBe(false);
  });
});
