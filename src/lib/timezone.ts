/**
 * Time-zone arithmetic on epoch milliseconds with nothing but `Intl` (workerd and Node both ship
 * full ICU). "Wall time" below means a zone's local date and time encoded as if it were UTC, so
 * plain `Date.UTC` arithmetic on it is calendar arithmetic with no DST in the way.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/**
 * The instants the API reads and writes: the years 1–9999 in UTC, where Postgres timestamps and
 * `Date#toISOString` agree. A bound outside them cannot be written to the database.
 */
export const EARLIEST_INSTANT_MS = Date.parse("0001-01-01T00:00:00.000Z");
export const LATEST_INSTANT_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** Local calendar fields of an instant. `month` is 1–12; `weekday` is 1 = Monday … 7 = Sunday. */
export interface ZonedParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  weekday: number;
}

/** A local date and time; omitted time fields are 0. Out-of-range fields roll over (day 32 → next month). */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
  millisecond?: number;
}

interface Zone {
  formatter: Intl.DateTimeFormat;
  utc: boolean;
}

// Keyed by the name as given (Intl matches names case-insensitively); cleared when it grows past
// any real number of zones, so odd spellings cannot grow it without bound.
const zones = new Map<string, Zone>();

// Intl accepts some non-IANA spellings only on newer engines (offset zones such as "+01:00"); this
// shape check keeps workerd and Node 20 agreeing on what is valid.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

const UTC_NAMES = new Set([
  "utc",
  "etc/utc",
  "uct",
  "etc/uct",
  "universal",
  "etc/universal",
  "zulu",
  "etc/zulu",
]);

/** The cached formatter of a zone; throws a RangeError for an unknown zone. */
function zoneFor(timeZone: string): Zone {
  let zone = zones.get(timeZone);
  if (!zone) {
    if (timeZone.length > 64 || !ZONE_NAME.test(timeZone)) {
      throw new RangeError(`Invalid time zone: ${timeZone}`);
    }
    const formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      calendar: "gregory",
      numberingSystem: "latn",
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    if (zones.size >= 2000) zones.clear();
    zone = { formatter, utc: UTC_NAMES.has(timeZone.toLowerCase()) };
    zones.set(timeZone, zone);
  }
  return zone;
}

/** True when `timeZone` is an IANA zone name this runtime knows (case-insensitive, as Intl). */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    zoneFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** True for the names of UTC itself, which are rendered with `Z` rather than `+00:00`. */
export function isUtcTimeZone(timeZone: string): boolean {
  return UTC_NAMES.has(timeZone.toLowerCase());
}

/** Wall time for a calendar date and time; also right for years 0–99, which `Date.UTC` maps to 19xx. */
export function wallTime(fields: LocalDateTime): number {
  const date = new Date(0);
  date.setUTCFullYear(fields.year, fields.month - 1, fields.day);
  date.setUTCHours(fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0, fields.millisecond ?? 0);
  return date.getTime();
}

// `format` is about four times cheaper than `formatToParts`; en-US with h23 gives "M/D/YYYY, HH:mm:ss".
const FORMATTED = /^(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)$/;

function wallSecond(second: number, formatter: Intl.DateTimeFormat): number {
  const match = FORMATTED.exec(formatter.format(second));
  if (match) {
    const field = (index: number) => Number(match[index]);
    const year = field(3);
    const fields = {
      year,
      month: field(1),
      day: field(2),
      hour: field(4) % 24,
      minute: field(5),
      second: field(6),
    };
    // Date.UTC is the cheap path but maps years 0–99 to 19xx.
    return year >= 100
      ? Date.UTC(year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second)
      : wallTime(fields);
  }
  // Only if an ICU version ever changes that shape.
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(second)) parts[part.type] = Number(part.value);
  return wallTime({
    year: parts.year ?? 0,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: (parts.hour ?? 0) % 24,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  });
}

/** The zone's UTC offset at an instant in milliseconds (wall time − instant); exact, seconds included. */
export function offsetMs(ms: number, timeZone: string): number {
  const zone = zoneFor(timeZone);
  if (zone.utc) return 0;
  const second = Math.floor(ms / 1000) * 1000;
  return wallSecond(second, zone.formatter) - second;
}

/** The zone's UTC offset at an instant, in whole minutes (pre-1900 local mean times are rounded). */
export function offsetMinutes(ms: number, timeZone: string): number {
  return Math.round(offsetMs(ms, timeZone) / MINUTE_MS);
}

/** The wall time of an instant. */
export function toWallTime(ms: number, timeZone: string): number {
  return ms + offsetMs(ms, timeZone);
}

export function zonedParts(ms: number, timeZone: string): ZonedParts {
  return wallParts(toWallTime(ms, timeZone));
}

/** Calendar fields of a wall time. */
export function wallParts(wall: number): ZonedParts {
  const date = new Date(wall);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millisecond: date.getUTCMilliseconds(),
    weekday: date.getUTCDay() || 7,
  };
}

/**
 * The instant of a wall time and the offset in force there. A wall time inside a DST gap moves
 * forward by the gap (02:30 on a spring-forward day → 03:30); one that occurs twice takes the earlier
 * instant. `hint` (an offset seen nearby, earlier in time) saves the full search when it fits.
 */
export function resolveWallTime(
  wall: number,
  timeZone: string,
  hint?: number,
): { ms: number; offset: number } {
  if (hint !== undefined && offsetMs(wall - hint, timeZone) === hint) {
    return { ms: wall - hint, offset: hint };
  }
  // Assumes at most one offset change within a day either side, which holds for modern tzdata.
  const before = offsetMs(wall - DAY_MS, timeZone);
  const after = offsetMs(wall + DAY_MS, timeZone);
  if (before === after) return { ms: wall - before, offset: before };
  const earlier = wall - before;
  const earlierOffset = offsetMs(earlier, timeZone);
  if (earlierOffset === before) return { ms: earlier, offset: before };
  const later = wall - after;
  if (offsetMs(later, timeZone) === after) return { ms: later, offset: after };
  // Neither fits: a gap. Reading the wall time with the offset before the gap lands after it.
  return { ms: earlier, offset: earlierOffset };
}

/** The instant of a local date and time in `timeZone` (see `resolveWallTime` for gaps and overlaps). */
export function zonedToInstant(fields: LocalDateTime, timeZone: string): number {
  return resolveWallTime(wallTime(fields), timeZone).ms;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/**
 * RFC 3339 in the zone's local time with its offset: `2026-11-01T00:00:00+01:00`, or with
 * `milliseconds` `2026-10-25T23:59:59.999+01:00`; `Z` for the UTC zone names.
 */
export function formatInstant(
  ms: number,
  timeZone: string,
  options: { milliseconds?: boolean } = {},
): string {
  const utc = zoneFor(timeZone).utc;
  const offset = offsetMinutes(ms, timeZone);
  // Built from the rounded offset so the text always denotes exactly `ms`.
  const p = wallParts(ms + offset * MINUTE_MS);
  const fraction = options.milliseconds ? `.${pad(p.millisecond, 3)}` : "";
  const abs = Math.abs(offset);
  const zone = utc ? "Z" : `${offset < 0 ? "-" : "+"}${pad(Math.floor(abs / 60), 2)}:${pad(abs % 60, 2)}`;
  return (
    `${pad(p.year, 4)}-${pad(p.month, 2)}-${pad(p.day, 2)}` +
    `T${pad(p.hour, 2)}:${pad(p.minute, 2)}:${pad(p.second, 2)}${fraction}${zone}`
  );
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The remainder with the divisor's sign (`%` keeps the dividend's): wall-clock arithmetic before 1970. */
export function floorMod(value: number, divisor: number): number {
  return ((value % divisor) + divisor) % divisor;
}

/** Start of the local minute containing `ms`. */
export function startOfLocalMinute(ms: number, timeZone: string): number {
  return ms - floorMod(toWallTime(ms, timeZone), MINUTE_MS);
}

/**
 * Start of the local hour containing `ms`, by subtraction rather than by wall time so the second
 * 02:00–03:00 of a fall-back night maps to its own hour, not to the first.
 */
export function startOfLocalHour(ms: number, timeZone: string): number {
  return ms - floorMod(toWallTime(ms, timeZone), HOUR_MS);
}

/** Local midnight starting the day of `ms` (the first instant of the day where midnight does not exist). */
export function startOfLocalDay(ms: number, timeZone: string): number {
  const wall = toWallTime(ms, timeZone);
  return resolveWallTime(wall - floorMod(wall, DAY_MS), timeZone).ms;
}

/** Local Monday midnight starting the week of `ms`. */
export function startOfLocalWeek(ms: number, timeZone: string): number {
  const wall = toWallTime(ms, timeZone);
  const day = Math.floor(wall / DAY_MS);
  return resolveWallTime((day - mondayIndex(day)) * DAY_MS, timeZone).ms;
}

/** Local midnight of the first day of the month of `ms`. */
export function startOfLocalMonth(ms: number, timeZone: string): number {
  const p = zonedParts(ms, timeZone);
  return zonedToInstant({ year: p.year, month: p.month, day: 1 }, timeZone);
}

/** Local midnight of January 1 of the year of `ms`. */
export function startOfLocalYear(ms: number, timeZone: string): number {
  return zonedToInstant({ year: zonedParts(ms, timeZone).year, month: 1, day: 1 }, timeZone);
}

/**
 * `ms` moved by whole local days, keeping its wall-clock time. The start of a day stays the start
 * of a day, across DST and also on a day without a midnight (a spring change at 00:00, as in
 * America/Santiago, starts the day at 01:00): the day after it starts at 00:00 again, where keeping
 * the wall clock would give 01:00.
 */
export function addLocalDays(ms: number, days: number, timeZone: string): number {
  const wall = toWallTime(ms, timeZone);
  const dayWall = wall - floorMod(wall, DAY_MS);
  const startsDay = resolveWallTime(dayWall, timeZone).ms === ms;
  return resolveWallTime((startsDay ? dayWall : wall) + days * DAY_MS, timeZone).ms;
}

/** `ms` moved by whole local months, keeping its wall-clock time; the day is clamped to the month's end. */
export function addLocalMonths(ms: number, months: number, timeZone: string): number {
  const p = zonedParts(ms, timeZone);
  const index = p.year * 12 + p.month - 1 + months;
  const year = Math.floor(index / 12);
  const month = floorMod(index, 12) + 1;
  return zonedToInstant({ ...p, year, month, day: Math.min(p.day, daysInMonth(year, month)) }, timeZone);
}

/** The local calendar day of `ms` as a count of days since 1970-01-01. */
export function localDayNumber(ms: number, timeZone: string): number {
  return Math.floor(toWallTime(ms, timeZone) / DAY_MS);
}

/** A day number (days since 1970-01-01) as its `YYYY-MM-DD` date. */
export function dayNumberDate(dayNumber: number): string {
  return new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
}

/** 0 for a Monday … 6 for a Sunday, given a day number (1970-01-01 was a Thursday). */
export function mondayIndex(dayNumber: number): number {
  return floorMod(dayNumber + 3, 7);
}
