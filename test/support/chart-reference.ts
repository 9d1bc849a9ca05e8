import { FIELD_KEYS, NUMERIC_FIELD_NAMES, snakeCase } from "./event-fields";
import type { RawEvent, RawFilter } from "./reference";

/**
 * The independent reference for `/export/charts`: plain TypeScript over the raw events a test
 * inserted, written from contract section 7 and the decisions documented on the route. It shares
 * no code with the SQL path (no range resolver, no time-zone helpers, no filter compiler, no
 * decimal helpers): buckets come from `Intl` local dates found by scanning, and every value is
 * kept in exact integer hundredths.
 *
 * Limits, which the tests respect: zones with whole-hour offsets (UTC, Europe/Oslo), property values
 * with at most 2 decimals, and no breakdown on a property whose value is a JSON object.
 */

export type RefInterval = "minute" | "hour" | "day" | "week" | "month";

/** A half-open window of epoch milliseconds. */
export interface RefWindow {
  start: number;
  end: number;
}

export interface RefSeries {
  name: string;
  segment?: string;
  property?: string;
  filters?: RawFilter[];
}

export interface RefChartRequest {
  projectId: string;
  series: RefSeries[];
  segment?: string;
  property?: string;
  breakdowns?: string[];
  filters?: RawFilter[];
  limit?: number;
  timezone: string;
  interval: RefInterval;
  window: RefWindow;
  previous?: RefWindow;
}

export interface RefComparison {
  value: number;
  change: number | null;
  diff: number | null;
  state: "positive" | "negative" | "neutral";
}

export interface RefMetrics {
  sum: number;
  average: number;
  min: number;
  max: number;
  previous?: { sum: RefComparison; average: RefComparison; min: RefComparison; max: RefComparison };
}

export interface RefChartSeries {
  id: string;
  names: string[];
  event: { id: string; name: string; breakdowns?: Record<string, string | null> };
  metrics: RefMetrics;
  data: Array<{ date: string; count: number; previous?: RefComparison }>;
}

export interface RefChart {
  series: RefChartSeries[];
  metrics: RefMetrics;
  meta: {
    startDate: string;
    endDate: string;
    timezone: string;
    interval: RefInterval;
    truncated: boolean;
    previous?: { startDate: string; endDate: string };
  };
}

// ---------------------------------------------------------------------------------------------
// Local time, from Intl.DateTimeFormat#formatToParts only.

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const partFormatters = new Map<string, Intl.DateTimeFormat>();

interface LocalFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function localFields(ms: number, timezone: string): LocalFields {
  let formatter = partFormatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-GB", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    partFormatters.set(timezone, formatter);
  }
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(ms)) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year ?? 0,
    month: parts.month ?? 0,
    day: parts.day ?? 0,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

const two = (value: number) => String(value).padStart(2, "0");

/** The local calendar date of an instant, `YYYY-MM-DD`. */
export function localDate(ms: number, timezone: string): string {
  const f = localFields(ms, timezone);
  return `${f.year}-${two(f.month)}-${two(f.day)}`;
}

/** `date` moved by whole calendar days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
}

const midnights = new Map<string, number>();

/**
 * The first instant of a local calendar day, found by scanning quarter hours from well before it:
 * every clock change of the zones used here lies on a quarter hour.
 */
export function localMidnight(date: string, timezone: string): number {
  const key = `${timezone} ${date}`;
  const known = midnights.get(key);
  if (known !== undefined) return known;
  let t = Date.parse(`${date}T00:00:00Z`) - 15 * HOUR;
  while (localDate(t, timezone) < date) t += 15 * MINUTE;
  midnights.set(key, t);
  return t;
}

/** Local days `first` through `last`, both included. */
export function dayWindow(first: string, last: string, timezone: string): RefWindow {
  return { start: localMidnight(first, timezone), end: localMidnight(addDays(last, 1), timezone) };
}

const isLocalMidnight = (ms: number, timezone: string) =>
  localMidnight(localDate(ms, timezone), timezone) === ms;

/** The previous period: as many local days back for whole-day windows, else the same duration. */
export function previousWindow(window: RefWindow, timezone: string): RefWindow {
  if (isLocalMidnight(window.start, timezone) && isLocalMidnight(window.end, timezone)) {
    const first = localDate(window.start, timezone);
    const days = (Date.parse(localDate(window.end, timezone)) - Date.parse(first)) / DAY;
    return { start: localMidnight(addDays(first, -days), timezone), end: window.start };
  }
  return { start: window.start - (window.end - window.start), end: window.start };
}

/** RFC 3339 in the zone's local time with its offset (`Z` for UTC). */
export function formatLocal(ms: number, timezone: string, milliseconds = false): string {
  const f = localFields(ms, timezone);
  const wall = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second);
  const offset = Math.round((wall - Math.floor(ms / 1000) * 1000) / MINUTE);
  const zone =
    timezone === "UTC"
      ? "Z"
      : `${offset < 0 ? "-" : "+"}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
  const fraction = milliseconds ? `.${String(((ms % 1000) + 1000) % 1000).padStart(3, "0")}` : "";
  return `${localDate(ms, timezone)}T${two(f.hour)}:${two(f.minute)}:${two(f.second)}${fraction}${zone}`;
}

/** The start of the bucket holding `ms` (hours and minutes: whole-hour offsets assumed). */
function bucketStart(ms: number, interval: RefInterval, timezone: string): number {
  switch (interval) {
    case "minute":
      return ms - (((ms % MINUTE) + MINUTE) % MINUTE);
    case "hour":
      return ms - (((ms % HOUR) + HOUR) % HOUR);
    case "day":
      return localMidnight(localDate(ms, timezone), timezone);
    case "week": {
      const date = localDate(ms, timezone);
      const weekday = new Date(`${date}T00:00:00Z`).getUTCDay(); // 0 = Sunday
      return localMidnight(addDays(date, -((weekday + 6) % 7)), timezone);
    }
    case "month":
      return localMidnight(`${localDate(ms, timezone).slice(0, 7)}-01`, timezone);
  }
}

/**
 * Every bucket start touched by the window, in order, found by probing it every minute (minute
 * buckets) or every hour (coarser ones: local midnights of the zones used here fall on whole hours).
 */
export function bucketStarts(window: RefWindow, interval: RefInterval, timezone: string): number[] {
  const step = interval === "minute" ? MINUTE : HOUR;
  const starts: number[] = [];
  const add = (ms: number) => {
    const start = bucketStart(ms, interval, timezone);
    if (starts[starts.length - 1] !== start) starts.push(start);
  };
  for (let t = window.start; t < window.end; t += step) add(t);
  add(window.end - 1);
  return starts;
}

// ---------------------------------------------------------------------------------------------
// Event fields and filters, written from contract section 3 (charts test the event itself).

function propertyOf(event: RawEvent, name: string): unknown {
  let value: unknown = event.properties;
  for (const key of name.slice("properties.".length).split(".")) {
    value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/** The field as text (numbers in decimal), or null when missing. */
function textOf(event: RawEvent, name: string): string | null {
  if (name.startsWith("properties.")) {
    const value = propertyOf(event, name);
    if (value === undefined || value === null) return null;
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  const key = FIELD_KEYS[snakeCase(name)];
  if (key === undefined) throw new Error(`reference: unknown field ${name}`);
  const value = event[key];
  return value === null || value === undefined ? null : String(value);
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function passes(event: RawEvent, filter: RawFilter): boolean {
  const name = filter.name.startsWith("properties.") ? filter.name : snakeCase(filter.name);
  const numeric = NUMERIC_FIELD_NAMES.has(name);
  const text = textOf(event, name);
  const values = (filter.value ?? []).map(String);
  const equal = () =>
    text !== null && values.some((v) => (numeric ? Number(v) === Number(text) : v === text));
  const contains = () => text !== null && values.some((v) => text.includes(v));
  switch (filter.operator) {
    case "is":
      return equal();
    case "isNot":
      return !equal();
    case "contains":
      return contains();
    case "doesNotContain":
      return !contains();
    case "startsWith":
      return text !== null && values.some((v) => text.startsWith(v));
    case "endsWith":
      return text !== null && values.some((v) => text.endsWith(v));
    case "regex":
      return text !== null && values.some((v) => new RegExp(v).test(text));
    case "isNull":
      return text === null || (!numeric && text === "");
    case "isNotNull":
      return !(text === null || (!numeric && text === ""));
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      if (text === null || !DECIMAL.test(text)) return false;
      const left = Number(text);
      const right = Number(values[0]);
      if (filter.operator === "gt") return left > right;
      if (filter.operator === "gte") return left >= right;
      if (filter.operator === "lt") return left < right;
      return left <= right;
    }
    default:
      throw new Error(`reference: unknown operator ${filter.operator}`);
  }
}

/** A property segment's number in hundredths, or null when missing or not numeric (skipped). */
function amountOf(event: RawEvent, name: string): number | null {
  if (!name.startsWith("properties."))
    return Math.round(Number(event[FIELD_KEYS[name] as keyof RawEvent]) * 100);
  const value = propertyOf(event, name);
  if (typeof value === "number") return Number.isFinite(value) ? Math.round(value * 100) : null;
  if (typeof value === "string" && DECIMAL.test(value)) return Math.round(Number(value) * 100);
  return null;
}

// ---------------------------------------------------------------------------------------------
// Arithmetic in integer hundredths, rounding half away from zero.

function roundedDivision(numerator: number, denominator: number): number {
  const sign = Math.sign(numerator) * Math.sign(denominator);
  const n = Math.abs(numerator);
  const d = Math.abs(denominator);
  return sign * Math.floor((2 * n + d) / (2 * d)) + 0;
}

const fromHundredths = (value: number) => value / 100;

function comparison(current: number, previous: number): RefComparison {
  return {
    value: fromHundredths(previous),
    change: previous === 0 ? null : roundedDivision(1000 * (current - previous), Math.abs(previous)) / 10,
    // OpenPanel's: |current - previous| / |previous| in percent, 1 decimal; null when equal or from 0.
    diff:
      previous === 0 || current === previous
        ? null
        : roundedDivision(1000 * Math.abs(current - previous), Math.abs(previous)) / 10,
    state: current > previous ? "positive" : current < previous ? "negative" : "neutral",
  };
}

interface Summary {
  sum: number;
  average: number;
  min: number;
  max: number;
}

function summary(values: number[]): Summary {
  if (values.length === 0) return { sum: 0, average: 0, min: 0, max: 0 };
  const sum = values.reduce((total, value) => total + value, 0);
  return {
    sum,
    average: roundedDivision(sum, values.length),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

function metrics(current: number[], previous: number[] | undefined): RefMetrics {
  const now = summary(current);
  const result: RefMetrics = {
    sum: fromHundredths(now.sum),
    average: fromHundredths(now.average),
    min: fromHundredths(now.min),
    max: fromHundredths(now.max),
  };
  if (previous) {
    const before = summary(previous);
    result.previous = {
      sum: comparison(now.sum, before.sum),
      average: comparison(now.average, before.average),
      min: comparison(now.min, before.min),
      max: comparison(now.max, before.max),
    };
  }
  return result;
}

/** The value of one bucket, in hundredths, from its events. */
function bucketValue(segment: string, list: RawEvent[], property: string | undefined): number {
  if (list.length === 0) return 0;
  const distinct = (key: "profileId" | "sessionId") => new Set(list.map((event) => event[key])).size;
  const amounts = () => list.map((event) => amountOf(event, property ?? "") ?? 0);
  switch (segment) {
    case "event":
    case "one_event_per_user":
      return list.length * 100;
    case "user":
      return distinct("profileId") * 100;
    case "session":
      return distinct("sessionId") * 100;
    case "user_average":
      return roundedDivision(list.length * 100, distinct("profileId"));
    case "property_sum":
      return amounts().reduce((sum, value) => sum + value, 0);
    case "property_average":
      return roundedDivision(
        amounts().reduce((sum, value) => sum + value, 0),
        list.length,
      );
    case "property_min":
      return Math.min(...amounts());
    case "property_max":
      return Math.max(...amounts());
    default:
      throw new Error(`reference: unknown segment ${segment}`);
  }
}

/** 32-bit FNV-1a over UTF-8 bytes, 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 2166136261;
  for (const byte of new TextEncoder().encode(text)) {
    hash = (hash ^ byte) >>> 0;
    hash = Number((BigInt(hash) * BigInt(16777619)) % BigInt(4294967296));
  }
  return hash.toString(16).padStart(8, "0");
}

function compareText(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

interface Period {
  window: RefWindow;
  starts: number[];
}

/** Per breakdown group (JSON of its values): the bucket values of one period, in hundredths. */
function periodValues(
  matching: RawEvent[],
  period: Period,
  request: RefChartRequest,
  segment: string,
  property: string | undefined,
  timezone: string,
): Map<string, number[]> {
  let inPeriod = matching.filter((event) => {
    const t = event.createdAt.getTime();
    return t >= period.window.start && t < period.window.end;
  });
  if (segment === "one_event_per_user") {
    const latest = new Map<string, RawEvent>();
    for (const event of inPeriod) {
      const seen = latest.get(event.profileId);
      if (!seen || event.createdAt.getTime() > seen.createdAt.getTime()) latest.set(event.profileId, event);
    }
    inPeriod = [...latest.values()];
  }
  const position = new Map(period.starts.map((start, index) => [start, index]));
  const lists = new Map<string, RawEvent[][]>();
  for (const event of inPeriod) {
    const values = (request.breakdowns ?? []).map((name) => {
      const text = textOf(event, name);
      return text === "" ? null : text;
    });
    const key = JSON.stringify(values);
    const buckets = lists.get(key) ?? period.starts.map(() => []);
    const index = position.get(bucketStart(event.createdAt.getTime(), request.interval, timezone));
    if (index === undefined) throw new Error("reference: event outside every bucket");
    buckets[index]?.push(event);
    lists.set(key, buckets);
  }
  const out = new Map<string, number[]>();
  for (const [key, buckets] of lists) {
    out.set(
      key,
      buckets.map((list) => bucketValue(segment, list, property)),
    );
  }
  return out;
}

/** The complete `/export/charts` body for the events a test inserted. */
export function referenceChart(events: RawEvent[], request: RefChartRequest): RefChart {
  const { timezone, interval } = request;
  const current: Period = {
    window: request.window,
    starts: bucketStarts(request.window, interval, timezone),
  };
  const previous: Period | undefined = request.previous
    ? { window: request.previous, starts: bucketStarts(request.previous, interval, timezone) }
    : undefined;
  const limit = request.limit ?? 50;
  const breakdowns = request.breakdowns ?? [];
  const dates = current.starts.map((start) => formatLocal(start, timezone));
  let truncated = false;

  const built: Array<{
    series: RefChartSeries;
    sum: number;
    index: number;
    rank: number;
    values: number[];
    before?: number[];
  }> = [];
  request.series.forEach((series, index) => {
    const segment = series.segment ?? request.segment ?? "event";
    const property = segment.startsWith("property_") ? (series.property ?? request.property) : undefined;
    const filters = [...(request.filters ?? []), ...(series.filters ?? [])];
    const matching = events.filter(
      (event) =>
        event.projectId === request.projectId &&
        (series.name === "*" || event.name === series.name) &&
        filters.every((filter) => passes(event, filter)) &&
        (property === undefined || amountOf(event, property) !== null),
    );
    const now = periodValues(matching, current, request, segment, property, timezone);
    const before = previous
      ? periodValues(matching, previous, request, segment, property, timezone)
      : undefined;
    if (breakdowns.length === 0 && now.size === 0)
      now.set(
        "[]",
        current.starts.map(() => 0),
      );
    const groups = [...now.entries()]
      .map(([key, values]) => ({
        values: JSON.parse(key) as Array<string | null>,
        buckets: values,
        total: values.reduce((sum, value) => sum + value, 0),
      }))
      .sort((a, b) => {
        if (a.total !== b.total) return b.total - a.total;
        for (let i = 0; i < a.values.length; i++) {
          const order = compareText(a.values[i] ?? null, b.values[i] ?? null);
          if (order !== 0) return order;
        }
        return 0;
      });
    if (groups.length > limit) truncated = true;
    groups.slice(0, limit).forEach((group, rank) => {
      const key = JSON.stringify(group.values);
      const beforeValues = previous ? (before?.get(key) ?? previous.starts.map(() => 0)) : undefined;
      const id = `a${index + 1}`;
      built.push({
        series: {
          id: breakdowns.length > 0 ? `${id}-${fnv1a(key)}` : id,
          names: [series.name, ...group.values.map((value) => value ?? "(not set)")],
          event: {
            id,
            name: series.name,
            ...(breakdowns.length > 0
              ? {
                  breakdowns: Object.fromEntries(
                    breakdowns.map((name, i) => [name, group.values[i] ?? null]),
                  ),
                }
              : {}),
          },
          metrics: metrics(group.buckets, beforeValues),
          data: group.buckets.map((value, position) => {
            const partner = beforeValues?.[position];
            return {
              date: dates[position] ?? "",
              count: fromHundredths(value),
              ...(partner === undefined ? {} : { previous: comparison(value, partner) }),
            };
          }),
        },
        sum: group.total,
        index,
        rank,
        values: group.buckets,
        ...(beforeValues ? { before: beforeValues } : {}),
      });
    });
  });

  built.sort(
    (a, b) =>
      b.sum - a.sum ||
      compareText(a.series.event.name, b.series.event.name) ||
      a.index - b.index ||
      a.rank - b.rank,
  );
  return {
    series: built.map((item) => item.series),
    metrics: metrics(
      built.flatMap((item) => item.values),
      previous ? built.flatMap((item) => item.before ?? []) : undefined,
    ),
    meta: {
      startDate: formatLocal(request.window.start, timezone, request.window.start % 1000 !== 0),
      endDate: formatLocal(request.window.end - 1, timezone, true),
      timezone,
      interval,
      truncated,
      ...(request.previous
        ? {
            previous: {
              startDate: formatLocal(request.previous.start, timezone, request.previous.start % 1000 !== 0),
              endDate: formatLocal(request.previous.end - 1, timezone, true),
            },
          }
        : {}),
    },
  };
}
