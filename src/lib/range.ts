import {
  autoInterval,
  bucketStarts,
  countBuckets,
  INTERVALS,
  type Interval,
  MAX_BUCKETS,
  tooManyBuckets,
  type Window,
} from "./buckets";
import { ApiError } from "./errors";
import {
  addLocalMonths,
  DAY_MS,
  daysInMonth,
  EARLIEST_INSTANT_MS,
  floorMod,
  formatInstant,
  HOUR_MS,
  isValidTimeZone,
  LATEST_INSTANT_MS,
  localDayNumber,
  MINUTE_MS,
  resolveWallTime,
  startOfLocalDay,
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
  /**
   * The project's first event (epoch ms), null when it has none. A window longer than
   * MAX_SPAN_YEARS ("all time": `startDate=1970-01-01`) starts at that event's local day instead.
   */
  firstEventAt?: number | null;
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
  /**
   * `endDate` is the last included millisecond; both in `timezone`, RFC 3339 with its offset.
   * `requestedStartDate`: only when a long window was clamped to the project's history, the start
   * that was asked for.
   */
  meta: {
    startDate: string;
    endDate: string;
    timezone: string;
    interval: Interval;
    requestedStartDate?: string;
  };
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

/** A window as the answers state it: its start and its last included millisecond, RFC 3339 in `timezone`. */
export function windowMeta(window: Window, timezone: string): { startDate: string; endDate: string } {
  return {
    startDate: formatInstant(window.start, timezone, { milliseconds: floorMod(window.start, 1000) !== 0 }),
    endDate: formatInstant(window.end - 1, timezone, { milliseconds: true }),
  };
}

/**
 * What of a resolved range decides an answer, for cache keys and cursor fingerprints. The start
 * asked for counts only when a long window was clamped: the answer's `meta` names it.
 */
export function rangeFingerprint(range: ResolvedRange): Record<string, unknown> {
  return {
    window: range.window,
    timezone: range.timezone,
    interval: range.interval,
    previous: range.previous?.window ?? null,
    ...(range.meta.requestedStartDate ? { requestedStart: range.meta.requestedStartDate } : {}),
  };
}

/**
 * A window longer than MAX_SPAN_YEARS (calendar years in the zone) that starts before the project's
 * history starts at the local day of its first event instead: "all time" (`startDate=1970-01-01`)
 * then holds the buckets of the data, not of 56 empty years. Shorter windows keep the start asked
 * for; a project without events, or whose first event is past the window, keeps it too (the bucket
 * limit still applies).
 */
function clampToHistory(window: Window, firstEventAt: number | null | undefined, timezone: string): Window {
  if (firstEventAt === undefined || firstEventAt === null) return window;
  if (window.end <= addLocalMonths(window.start, MAX_SPAN_YEARS * 12, timezone)) return window;
  const historyStart = startOfLocalDay(firstEventAt, timezone);
  return historyStart > window.start && historyStart < window.end
    ? { start: historyStart, end: window.end }
    : window;
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

  const requested = window;
  window = clampToHistory(window, input.firstEventAt, timezone);
  const interval = input.interval ?? (input.autoInterval ? autoInterval(window, timezone) : "day");
  const count = countBuckets(window, interval, timezone);
  if (count > MAX_BUCKETS) throw tooManyBuckets(count, interval, window, timezone);

  const resolved: ResolvedRange = {
    timezone,
    window,
    interval,
    buckets: bucketStarts(window, interval, timezone),
    meta: {
      ...windowMeta(window, timezone),
      timezone,
      interval,
      ...(window.start === requested.start
        ? {}
        : { requestedStartDate: windowMeta(requested, timezone).startDate }),
    },
  };
  if (input.previous) {
    const previous = previousWindow(window, timezone);
    // Bounds and presets are storable instants; a previous period may still reach before year 1.
    requireStorableInstant(previous.start, "previous");
    resolved.previous = { window: previous, buckets: bucketStarts(previous, interval, timezone) };
  }
  return resolved;
}
