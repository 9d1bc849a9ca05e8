import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { type Filter, normalizeFilters } from "../../lib/filter-parser";
import { type RangePreset, type ResolvedRange, rangeFingerprint, resolveRange } from "../../lib/range";
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

/** The scope as the session queries take it. */
export function sessionScopeOf(scope: InsightsScope, projectId: string): SessionScope {
  return {
    projectId,
    window: scope.range.window,
    filters: scope.filters,
    rollups: scope.rollups,
    projectTimezone: scope.projectTimezone,
  };
}

/** The window of an answer whose body cannot say it (an array, a listing): `X-Window-*` headers. */
export function windowHeaders(range: ResolvedRange): Record<string, string> {
  return {
    "X-Window-Start": range.meta.startDate,
    ...(range.meta.requestedStartDate ? { "X-Requested-Window-Start": range.meta.requestedStartDate } : {}),
    "X-Window-End": range.meta.endDate,
    "X-Timezone": range.timezone,
  };
}
