import { ApiError } from "./errors";
import {
  addLocalMonths,
  DAY_MS,
  daysInMonth,
  EARLIEST_INSTANT_MS,
  formatInstant,
  HOUR_MS,
  isValidTimeZone,
  LATEST_INSTANT_MS,
  localDayNumber,
  MINUTE_MS,
  mondayIndex,
  offsetMs,
  resolveWallTime,
  startOfLocalDay,
  startOfLocalHour,
  startOfLocalMinute,
  toWallTime,
  wallParts,
  wallTime,
} from "./timezone";
import { given } from "./validation";

/**
 * The one range resolver of the service (contract sections 2 and 7): presets, explicit bounds,
 * intervals, buckets and the previous period, all in the caller's time zone. Pure: the clock comes in.
 */

export const RANGE_PRESETS = [
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
] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];

export const INTERVALS = ["minute", "hour", "day", "week", "month"] as const;
export type Interval = (typeof INTERVALS)[number];

export const MAX_BUCKETS = 2000;
export const MAX_SPAN_YEARS = 2;

export interface RangeInput {
  range?: RangePreset;
  startDate?: string;
  endDate?: string;
  timezone: string;
  interval?: Interval;
  previous?: boolean;
  now: Date;
  /** The preset used when neither `range` nor dates are given; `7d` unless set (`/export/charts`: `30d`). */
  defaultRange?: RangePreset;
  /** True for `/metrics`: pick the interval from the window when none is given; otherwise `day`. */
  autoInterval?: boolean;
  /** Parameter names used in error paths; `startDate`/`endDate` unless set. */
  paramNames?: { start: string; end: string };
}

/** A half-open span of epoch milliseconds: `start` inclusive, `end` exclusive. */
export interface Window {
  start: number;
  end: number;
}

export interface ResolvedRange {
  timezone: string;
  window: Window;
  interval: Interval;
  /** Bucket start instants: the first contains `window.start`, all are before `window.end`. */
  buckets: number[];
  /**
   * Present when asked for. Its buckets come from its own window, so with week or month buckets
   * (and hour buckets over a DST day) it may hold one bucket more or fewer than the current
   * period; callers pair by position and leave an unpaired bucket without a partner.
   */
  previous?: { window: Window; buckets: number[] };
  /** `endDate` is the last included millisecond; both in `timezone`, RFC 3339 with its offset. */
  meta: { startDate: string; endDate: string; timezone: string; interval: Interval };
}

const FORMATS_HINT =
  "YYYY-MM-DD, YYYY-MM-DD HH:mm:ss (local to timezone) or an RFC 3339 date-time such as 2026-11-01T00:00:00Z";

// Date, optional time with optional fraction, optional offset. A space before the offset is a `+`
// that an unencoded query string turned into a space.
const DATE_INPUT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+\- ]\d{2}:\d{2})?)?$/;

function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/** Validates a zone name and returns it unchanged, or throws a 400 naming `param`. */
export function requireTimeZone(timezone: string, param = "timezone"): string {
  if (!isValidTimeZone(timezone)) {
    throw ApiError.invalid(
      param,
      `Unknown ${param} ${quote(timezone)}; use an IANA time zone name such as Europe/Oslo or UTC.`,
    );
  }
  return timezone;
}

/**
 * Parses one bound: `YYYY-MM-DD` (a local day), `YYYY-MM-DD HH:mm:ss[.SSS]` (local wall time, `T`
 * allowed) or RFC 3339 with `Z` or an offset (an absolute instant). For `start` it returns the first
 * included instant. For `end` it returns the exclusive end of the precision given, so the bound is
 * inclusive: a day runs to the next local midnight, a second to +1000 ms, a millisecond to +1 ms.
 */
export function parseDateBound(
  value: string,
  timezone: string,
  bound: "start" | "end",
  param: string,
): number {
  const match = DATE_INPUT.exec(value.trim());
  if (!match) throw ApiError.invalid(param, `${param} must be ${FORMATS_HINT}; got ${quote(value)}.`);
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw ApiError.invalid(param, `${param} ${quote(value)} is not a calendar date.`);
  }
  if (h === undefined) {
    requireTimeZone(timezone);
    const wall = wallTime({ year, month, day: bound === "end" ? day + 1 : day });
    return requireStorableInstant(resolveWallTime(wall, timezone).ms, param);
  }
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (hour > 23 || minute > 59 || second > 59) {
    throw ApiError.invalid(param, `${param} ${quote(value)} is not a valid time of day.`);
  }
  // Finer digits are truncated: the inclusive end still covers them.
  const millisecond = fraction === undefined ? 0 : Number(fraction.padEnd(3, "0").slice(0, 3));
  const wall = wallTime({ year, month, day, hour, minute, second, millisecond });
  let instant: number;
  if (zone === undefined) {
    requireTimeZone(timezone);
    instant = resolveWallTime(wall, timezone).ms;
  } else if (zone === "Z" || zone === "z") {
    instant = wall;
  } else {
    const offsetHours = Number(zone.slice(1, 3));
    const offsetMinutes = Number(zone.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) {
      throw ApiError.invalid(param, `${param} ${quote(value)} has an invalid UTC offset.`);
    }
    const sign = zone.startsWith("-") ? -1 : 1;
    instant = wall - sign * (offsetHours * HOUR_MS + offsetMinutes * MINUTE_MS);
  }
  return requireStorableInstant(
    bound === "start" ? instant : instant + (fraction === undefined ? 1000 : 1),
    param,
  );
}

const STORABLE_YEARS =
  "the window must lie between 0001-01-01 and 9999-12-31 (UTC), the years the API can store";

/**
 * An instant the database can be given: a bound outside the years 1–9999 in UTC (for an end, its
 * exclusive end) is a 400 naming `param`, not a failed query.
 */
function requireStorableInstant(instant: number, param: string): number {
  if (instant < EARLIEST_INSTANT_MS || instant > LATEST_INSTANT_MS) {
    throw ApiError.invalid(param, `${param}: ${STORABLE_YEARS}.`);
  }
  return instant;
}

function floorMod(value: number, divisor: number): number {
  return ((value % divisor) + divisor) % divisor;
}

/** The window of a preset at `now`, in `timezone`. */
export function presetWindow(preset: Exclude<RangePreset, "custom">, now: number, timezone: string): Window {
  const nowWall = toWallTime(now, timezone);
  const todayWall = nowWall - floorMod(nowWall, DAY_MS);
  const { year, month } = wallParts(nowWall);
  const at = (wall: number) => resolveWallTime(wall, timezone).ms;
  const monthStart = (monthsBack: number) => at(wallTime({ year, month: month - monthsBack, day: 1 }));
  const endOfToday = at(todayWall + DAY_MS);
  const minutesBack = (minutes: number): Window => ({
    start: startOfLocalMinute(now - minutes * MINUTE_MS, timezone),
    end: startOfLocalMinute(now, timezone) + MINUTE_MS,
  });
  switch (preset) {
    case "30min":
      return minutesBack(30);
    case "lastHour":
      return minutesBack(60);
    case "last24h":
      return minutesBack(24 * 60);
    case "today":
      return { start: at(todayWall), end: endOfToday };
    case "yesterday":
      return { start: at(todayWall - DAY_MS), end: at(todayWall) };
    case "7d":
      return { start: at(todayWall - 7 * DAY_MS), end: endOfToday };
    case "30d":
      return { start: at(todayWall - 30 * DAY_MS), end: endOfToday };
    case "3m":
      return { start: monthStart(3), end: endOfToday };
    case "6m":
      return { start: monthStart(6), end: endOfToday };
    case "12m":
      return { start: monthStart(12), end: endOfToday };
    case "monthToDate":
      return { start: monthStart(0), end: endOfToday };
    case "lastMonth":
      return { start: monthStart(1), end: monthStart(0) };
    case "yearToDate":
      return { start: at(wallTime({ year, month: 1, day: 1 })), end: endOfToday };
    case "lastYear":
      return {
        start: at(wallTime({ year: year - 1, month: 1, day: 1 })),
        end: at(wallTime({ year, month: 1, day: 1 })),
      };
  }
}

/** Number of local calendar days a window touches (1 when it lies within one local day). */
export function localDaysTouched(window: Window, timezone: string): number {
  return localDayNumber(window.end - 1, timezone) - localDayNumber(window.start, timezone) + 1;
}

/** The automatic interval of `/metrics`: same local day → hour, ≤ 92 days → day, ≤ 186 → week, else month. */
export function autoInterval(window: Window, timezone: string): Interval {
  const days = localDaysTouched(window, timezone);
  if (days <= 1) return "hour";
  if (days <= 92) return "day";
  if (days <= 186) return "week";
  return "month";
}

function monthNumber(ms: number, timezone: string): number {
  const { year, month } = wallParts(toWallTime(ms, timezone));
  return year * 12 + month - 1;
}

/**
 * How many buckets `bucketStarts` returns, computed without listing them (so an oversized request
 * is refused cheaply). Exact for every zone whose offsets change by whole hours.
 */
export function countBuckets(window: Window, interval: Interval, timezone: string): number {
  if (!(window.start < window.end)) return 0;
  const last = window.end - 1;
  switch (interval) {
    case "minute":
      return Math.ceil((window.end - startOfLocalMinute(window.start, timezone)) / MINUTE_MS);
    case "hour":
      return Math.ceil((window.end - startOfLocalHour(window.start, timezone)) / HOUR_MS);
    case "day":
      return localDaysTouched(window, timezone);
    case "week": {
      const first = localDayNumber(window.start, timezone);
      const end = localDayNumber(last, timezone);
      return (end - mondayIndex(end) - (first - mondayIndex(first))) / 7 + 1;
    }
    case "month":
      return monthNumber(last, timezone) - monthNumber(window.start, timezone) + 1;
  }
}

/**
 * Hour starts: absolute hours, so a fall-back day has 25 and a spring-forward day 23, and a zone
 * such as Asia/Kolkata starts them at its own :00. The offset is probed once per 24 hours; only
 * where it changed by a part of an hour (Australia/Lord_Howe) is each hour placed on the wall clock,
 * the clock change itself then starting a short bucket.
 */
function hourStarts(window: Window, timezone: string): number[] {
  const out: number[] = [];
  let t = startOfLocalHour(window.start, timezone);
  let offset = offsetMs(t, timezone);
  while (t < window.end) {
    const probe = t + DAY_MS;
    const probeOffset = offsetMs(probe, timezone);
    if (floorMod(t + offset, HOUR_MS) === 0 && (probeOffset - offset) % HOUR_MS === 0) {
      for (; t < probe && t < window.end; t += HOUR_MS) out.push(t);
      offset = probeOffset;
      continue;
    }
    for (let i = 0; i < 24 && t < window.end; i++) {
      out.push(t);
      const next = t + HOUR_MS;
      const nextOffset = offsetMs(next, timezone);
      if (floorMod(next + nextOffset, HOUR_MS) === 0) {
        t = next;
        offset = nextOffset;
        continue;
      }
      const wall = t + offset;
      const resolved = resolveWallTime(wall - floorMod(wall, HOUR_MS) + HOUR_MS, timezone, offset);
      t = resolved.ms > t ? resolved.ms : next;
      offset = offsetMs(t, timezone);
    }
  }
  return out;
}

/** Local midnights (day), Monday midnights (week) or first-of-month midnights (month). */
function calendarStarts(window: Window, interval: "day" | "week" | "month", timezone: string): number[] {
  const out: number[] = [];
  const startWall = toWallTime(window.start, timezone);
  let wall = startWall - floorMod(startWall, DAY_MS);
  if (interval === "week") wall -= mondayIndex(wall / DAY_MS) * DAY_MS;
  if (interval === "month") wall -= (wallParts(wall).day - 1) * DAY_MS;
  let hint: number | undefined;
  for (;;) {
    const resolved = resolveWallTime(wall, timezone, hint);
    if (resolved.ms >= window.end) break;
    // A skipped day (Pacific/Apia, 2011-12-30) resolves to the next one: keep the starts increasing.
    const previous = out[out.length - 1];
    if (previous === undefined || resolved.ms > previous) out.push(resolved.ms);
    hint = resolved.offset;
    if (interval === "day") wall += DAY_MS;
    else if (interval === "week") wall += 7 * DAY_MS;
    else {
      const { year, month } = wallParts(wall);
      wall = wallTime({ year, month: month + 1, day: 1 });
    }
  }
  return out;
}

/** Bucket start instants: the bucket containing `window.start`, then each following one before `window.end`. */
export function bucketStarts(window: Window, interval: Interval, timezone: string): number[] {
  // Also guards the loops against NaN bounds, which would never end them.
  if (!(Number.isFinite(window.start) && Number.isFinite(window.end) && window.start < window.end)) return [];
  switch (interval) {
    case "minute": {
      const out: number[] = [];
      for (let t = startOfLocalMinute(window.start, timezone); t < window.end; t += MINUTE_MS) out.push(t);
      return out;
    }
    case "hour":
      return hourStarts(window, timezone);
    default:
      return calendarStarts(window, interval, timezone);
  }
}

/** Position of the bucket containing `instant`, or -1 outside `[buckets[0], end)`. */
export function bucketIndex(instant: number, buckets: readonly number[], end: number): number {
  const first = buckets[0];
  if (first === undefined || instant < first || instant >= end) return -1;
  let low = 0;
  let high = buckets.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((buckets[mid] ?? Number.POSITIVE_INFINITY) <= instant) low = mid;
    else high = mid - 1;
  }
  return low;
}

/**
 * The previous period ends where `window` starts. A window of whole local days (both ends local
 * midnights) is moved back by the same number of calendar days, so a week across a DST change
 * pairs with a whole week; any other window by its duration.
 */
export function previousWindow(window: Window, timezone: string): Window {
  const startsAtMidnight = startOfLocalDay(window.start, timezone) === window.start;
  const endsAtMidnight = startOfLocalDay(window.end, timezone) === window.end;
  if (startsAtMidnight && endsAtMidnight) {
    const days = localDayNumber(window.end, timezone) - localDayNumber(window.start, timezone);
    const startWall = toWallTime(window.start, timezone);
    const dayWall = startWall - floorMod(startWall, DAY_MS);
    return { start: resolveWallTime(dayWall - days * DAY_MS, timezone).ms, end: window.start };
  }
  return { start: window.start - (window.end - window.start), end: window.start };
}

const BUCKET_WORDS: Record<Interval, string> = {
  minute: "per-minute",
  hour: "hourly",
  day: "daily",
  week: "weekly",
  month: "monthly",
};

let countFormat: Intl.NumberFormat | undefined;

function tooManyBuckets(count: number, interval: Interval, window: Window, timezone: string): ApiError {
  countFormat ??= new Intl.NumberFormat("en-US");
  const coarser = INTERVALS.slice(INTERVALS.indexOf(interval) + 1).find(
    (candidate) => countBuckets(window, candidate, timezone) <= MAX_BUCKETS,
  );
  const advice = coarser ? `use interval=${coarser} or coarser` : "use a shorter range";
  return ApiError.invalid(
    "interval",
    `${countFormat.format(count)} ${BUCKET_WORDS[interval]} buckets exceed the maximum of ${MAX_BUCKETS}; ${advice}`,
  );
}

/** A window as the answers state it: its start and its last included millisecond, RFC 3339 in `timezone`. */
export function windowMeta(window: Window, timezone: string): { startDate: string; endDate: string } {
  return {
    startDate: formatInstant(window.start, timezone, { milliseconds: floorMod(window.start, 1000) !== 0 }),
    endDate: formatInstant(window.end - 1, timezone, { milliseconds: true }),
  };
}

/** Resolves the window, interval, buckets and previous period of a request; every bad input is a 400. */
export function resolveRange(input: RangeInput): ResolvedRange {
  const timezone = requireTimeZone(input.timezone);
  const names = input.paramNames ?? { start: "startDate", end: "endDate" };
  if (input.range !== undefined && !RANGE_PRESETS.includes(input.range)) {
    throw ApiError.invalid("range", `range must be one of ${RANGE_PRESETS.join(", ")}.`);
  }
  if (input.interval !== undefined && !INTERVALS.includes(input.interval)) {
    throw ApiError.invalid("interval", `interval must be one of ${INTERVALS.join(", ")}.`);
  }

  let window: Window;
  const startDate = given(input.startDate);
  const endDate = given(input.endDate);
  if (startDate !== undefined && endDate !== undefined) {
    window = {
      start: parseDateBound(startDate, timezone, "start", names.start),
      end: parseDateBound(endDate, timezone, "end", names.end),
    };
    if (window.start >= window.end) {
      throw ApiError.invalid(names.start, `${names.start} must not be after ${names.end}.`);
    }
    // Calendar years in the zone: 2024-01-01 through 2025-12-31 is exactly the maximum.
    if (window.end > addLocalMonths(window.start, MAX_SPAN_YEARS * 12, timezone)) {
      throw ApiError.invalid(
        names.end,
        `The range from ${names.start} to ${names.end} exceeds the maximum of ${MAX_SPAN_YEARS} years.`,
      );
    }
  } else if (startDate !== undefined || endDate !== undefined) {
    // OpenPanel silently ignored a lone bound (contract section 10).
    const [present, missing] = startDate !== undefined ? [names.start, names.end] : [names.end, names.start];
    throw ApiError.invalid(missing, `${missing} is required when ${present} is given.`);
  } else {
    const preset = input.range ?? input.defaultRange ?? "7d";
    if (preset === "custom") {
      throw ApiError.invalid(names.start, `range=custom needs ${names.start} and ${names.end}.`);
    }
    window = presetWindow(preset, input.now.getTime(), timezone);
  }

  const interval = input.interval ?? (input.autoInterval ? autoInterval(window, timezone) : "day");
  const count = countBuckets(window, interval, timezone);
  if (count > MAX_BUCKETS) throw tooManyBuckets(count, interval, window, timezone);

  const resolved: ResolvedRange = {
    timezone,
    window,
    interval,
    buckets: bucketStarts(window, interval, timezone),
    meta: { ...windowMeta(window, timezone), timezone, interval },
  };
  if (input.previous) {
    const previous = previousWindow(window, timezone);
    // Bounds and presets are storable instants; a previous period may still reach before year 1.
    requireStorableInstant(previous.start, "previous");
    resolved.previous = { window: previous, buckets: bucketStarts(previous, interval, timezone) };
  }
  return resolved;
}
