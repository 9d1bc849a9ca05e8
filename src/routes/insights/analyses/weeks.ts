import type { Context } from "hono";
import type { AppEnv } from "../../../env";
import { ApiError } from "../../../lib/errors";
import { windowMeta } from "../../../lib/range";
import { addLocalDays, dayNumberDate, localDayNumber, startOfLocalWeek } from "../../../lib/timezone";
import { cacheKey, freshnessFor, readThrough } from "../../../middleware/cache";
import { useDatabase } from "../../../middleware/database";
import { sendJson } from "../../../middleware/send-json";
import { assertValidRegexes } from "../../../queries/filter-conditions";
import type { RangeQuery } from "../../params";
import { type InsightsScope, resolveInsightsScope, windowHeaders } from "../scope";

/** At most this many weeks in a retention window (contract A6). */
const MAX_WEEKS = 105;
/** Without a window: the current week and the 12 before it. */
const DEFAULT_WEEKS = 13;

/** A retention window: whole local Monday weeks, numbered as weekNumber() numbers them. */
export interface WeekScope {
  scope: InsightsScope;
  timezone: string;
  /** First and last week of the window, and the current week. */
  firstWeek: number;
  lastWeek: number;
  currentWeek: number;
  /** The window's start (a local Monday midnight) and end (the Monday after its last week). */
  start: number;
  end: number;
  /** The instant the week after the last one ends. */
  endOfNextWeek: number;
}

/** The Monday week of an instant: (local days since 1970-01-01, a Thursday, + 3) div 7. */
function weekNumber(ms: number, timezone: string): number {
  return Math.floor((localDayNumber(ms, timezone) + 3) / 7);
}

/** The Monday of a week number, `YYYY-MM-DD`. */
export const weekDate = (week: number) => dayNumberDate(week * 7 - 3);

/**
 * The window of a retention route: the one asked for, widened to whole weeks, or the current week
 * and the 12 before it; more than MAX_WEEKS weeks is a 400.
 */
export function resolveWeekScope(c: Context<AppEnv>, query: RangeQuery): WeekScope {
  const asked = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
  const timezone = asked.range.timezone;
  const now = Date.now();
  const given = query.range !== undefined || query.startDate !== undefined || query.endDate !== undefined;
  const start = given
    ? startOfLocalWeek(asked.range.window.start, timezone)
    : addLocalDays(startOfLocalWeek(now, timezone), -7 * (DEFAULT_WEEKS - 1), timezone);
  const end = addLocalDays(
    startOfLocalWeek((given ? asked.range.window.end : now + 1) - 1, timezone),
    7,
    timezone,
  );
  const firstWeek = weekNumber(start, timezone);
  const lastWeek = weekNumber(end - 1, timezone);
  if (lastWeek - firstWeek + 1 > MAX_WEEKS) {
    throw ApiError.invalid(
      "startDate",
      `the window holds ${lastWeek - firstWeek + 1} weeks; at most ${MAX_WEEKS}.`,
    );
  }
  const window = { start, end };
  const meta = windowMeta(window, timezone);
  const range = { ...asked.range, window, meta: { ...asked.range.meta, ...meta } };
  const { requestedStartDate: _requested, ...rangeMeta } = range.meta;
  return {
    scope: {
      ...asked,
      range: { ...range, meta: rangeMeta },
      fingerprint: { weeks: [firstWeek, lastWeek], timezone, filters: query.filters },
    },
    timezone,
    firstWeek,
    lastWeek,
    currentWeek: weekNumber(now, timezone),
    start,
    end,
    endOfNextWeek: addLocalDays(end, 7, timezone),
  };
}

/** Answers a bare array over a week window: cached like every insight, the window in `X-Window-*`. */
export async function answerWeeks<Row>(
  c: Context<AppEnv>,
  weeks: WeekScope,
  route: string,
  inputs: Record<string, unknown>,
  compute: (db: ReturnType<typeof useDatabase>) => Promise<Row[]>,
): Promise<Response> {
  const { scope } = weeks;
  const key = await cacheKey(c.get("project").id, route, {
    ...scope.fingerprint,
    ...inputs,
    now: weeks.currentWeek,
  });
  const answer = await readThrough(c, key, freshnessFor(scope.range), async () => {
    const db = useDatabase(c);
    await assertValidRegexes(db, scope.filters);
    return compute(db);
  });
  return sendJson(c, {
    body: answer.value,
    freshFor: answer.freshFor,
    cacheStatus: answer.cacheStatus,
    headers: windowHeaders(scope.range),
  });
}
