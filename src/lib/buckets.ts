import { ApiError } from "./errors";
import {
  DAY_MS,
  floorMod,
  HOUR_MS,
  localDayNumber,
  MINUTE_MS,
  mondayIndex,
  offsetMs,
  resolveWallTime,
  startOfLocalHour,
  startOfLocalMinute,
  toWallTime,
  wallParts,
  wallTime,
} from "./timezone";

/**
 * The buckets of a window: how many an interval makes, where each starts (local calendar days,
 * weeks and months, DST-aware hours) and the 400 past MAX_BUCKETS.
 */

export const INTERVALS = ["minute", "hour", "day", "week", "month"] as const;
export type Interval = (typeof INTERVALS)[number];

export const MAX_BUCKETS = 2000;

/** A half-open span of epoch milliseconds: `start` inclusive, `end` exclusive. */
export interface Window {
  start: number;
  end: number;
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

const BUCKET_WORDS: Record<Interval, string> = {
  minute: "per-minute",
  hour: "hourly",
  day: "daily",
  week: "weekly",
  month: "monthly",
};

let countFormat: Intl.NumberFormat | undefined;

export function tooManyBuckets(
  count: number,
  interval: Interval,
  window: Window,
  timezone: string,
): ApiError {
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
