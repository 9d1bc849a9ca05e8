import type { Context } from "hono";
import type { Database } from "../../db/client";
import type { AppEnv } from "../../env";
import { type Filter, normalizeFilters } from "../../lib/filter-parser";
import {
  type RangePreset,
  type ResolvedRange,
  rangeFingerprint,
  requireTimeZone,
  resolveRange,
  windowMeta,
} from "../../lib/range";
import { given } from "../../lib/validation";
import type { ActivitySource } from "../../queries/analyses/activity-source";
import { assertValidRegexes } from "../../queries/filter-conditions";
import type { SessionScope } from "../../queries/insights/model";
import { type RangeQuery, rollupsAllowed } from "../params";

export interface InsightsScope {
  range: ResolvedRange;
  filters: Filter[];
  /** Whether the hourly rollups may answer (wrangler var ROLLUPS, "off" forces the exact path). */
  rollups: boolean;
  /** The project's own timezone (the rollups' days are its days). */
  projectTimezone: string;
  /** Normalized inputs that fully determine the answer: the cache key and cursor fingerprint. */
  fingerprint: Record<string, unknown>;
  /** A lifetime route asked without a window (contract A1): all stored history up to now. */
  lifetime?: boolean;
}

/**
 * The window of a lifetime scope: every instant an event can carry. A fixed pair, so the cache key
 * and the cursors of "all history" do not change with the clock.
 */
export const LIFETIME_WINDOW = { start: 0, end: Date.UTC(9999, 0, 1) };

/**
 * The scope of a lifetime route (`/profiles*`): without `range`, `startDate` and `endDate`, all stored
 * history up to now in the request timezone; with any of them, the window as every insights route
 * resolves it.
 */
export function resolveLifetimeScope(c: Context<AppEnv>, query: RangeQuery): InsightsScope {
  if (
    query.range !== undefined ||
    given(query.startDate) !== undefined ||
    given(query.endDate) !== undefined
  ) {
    return resolveInsightsScope(c, query, { autoInterval: false });
  }
  const timezone = requireTimeZone(query.timezone ?? c.get("project").timezone);
  const range: ResolvedRange = {
    timezone,
    window: LIFETIME_WINDOW,
    interval: "day",
    buckets: [],
    meta: { ...windowMeta({ start: Date.now(), end: Date.now() + 1 }, timezone), timezone, interval: "day" },
  };
  return {
    range,
    filters: normalizeFilters(query.filters),
    rollups: rollupsAllowed(c),
    projectTimezone: c.get("project").timezone,
    fingerprint: { lifetime: true, timezone, filters: query.filters },
    lifetime: true,
  };
}

/** The window an object body states (contract A1): `startDate` null for a lifetime scope. */
export function scopeMeta(scope: InsightsScope): {
  startDate: string | null;
  endDate: string;
  timezone: string;
} {
  const { meta } = scope.range;
  return {
    startDate: scope.lifetime ? null : meta.startDate,
    endDate: meta.endDate,
    timezone: meta.timezone,
  };
}

/** Resolves the window and filters of an insights request in the project's timezone by default. */
export function resolveInsightsScope(
  c: Context<AppEnv>,
  query: RangeQuery,
  options: { autoInterval: boolean; defaultRange?: RangePreset },
): InsightsScope {
  const range = resolveRange({
    range: query.range,
    startDate: query.startDate,
    endDate: query.endDate,
    timezone: query.timezone ?? c.get("project").timezone,
    interval: query.interval,
    previous: query.previous === "true",
    now: new Date(),
    autoInterval: options.autoInterval,
    defaultRange: options.defaultRange,
    firstEventAt: c.get("project").firstEventAt,
  });
  return {
    range,
    filters: normalizeFilters(query.filters),
    rollups: rollupsAllowed(c),
    projectTimezone: c.get("project").timezone,
    fingerprint: { ...rangeFingerprint(range), filters: query.filters },
  };
}

/**
 * The scope as the session queries take it; `regexMatchesEmpty` is what `assertValidRegexes`
 * found (left out, regex filters stay on the exact path).
 */
export function sessionScopeOf(
  scope: InsightsScope,
  projectId: string,
  regexMatchesEmpty?: boolean,
): SessionScope {
  return {
    projectId,
    window: scope.range.window,
    filters: scope.filters,
    rollups: scope.rollups,
    projectTimezone: scope.projectTimezone,
    ...(regexMatchesEmpty === undefined ? {} : { regexMatchesEmpty }),
  };
}

/**
 * The session scope of a request whose regex patterns Postgres has checked (a 400 for an invalid
 * one); the same check says whether a pattern matches "", which decides if the rollups may answer.
 */
export async function checkedSessionScope(
  db: Database,
  scope: InsightsScope,
  projectId: string,
): Promise<SessionScope> {
  return sessionScopeOf(scope, projectId, await assertValidRegexes(db, scope.filters));
}

/**
 * What an analysis needs to choose between the per-profile activity aggregates and the events
 * (src/queries/analyses/activity-source.ts): the project, the request's and the project's
 * timezones, the rollups switch and the filters.
 */
export function activitySource(projectId: string, scope: InsightsScope): ActivitySource {
  return {
    projectId,
    timezone: scope.range.timezone,
    projectTimezone: scope.projectTimezone,
    rollups: scope.rollups,
    filters: scope.filters,
  };
}

/**
 * The window of an answer whose body cannot say it (an array, a listing): `X-Window-*` headers,
 * without `X-Window-Start` for a lifetime scope.
 */
export function windowHeaders(range: ResolvedRange, lifetime = false): Record<string, string> {
  return {
    ...(lifetime ? {} : { "X-Window-Start": range.meta.startDate }),
    ...(range.meta.requestedStartDate ? { "X-Requested-Window-Start": range.meta.requestedStartDate } : {}),
    "X-Window-End": range.meta.endDate,
    "X-Timezone": range.timezone,
  };
}
