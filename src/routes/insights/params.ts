import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { type Filter, FiltersParam, normalizeFilters, type RawFilter } from "../../lib/filters";
import { INTERVALS, RANGE_PRESETS, type ResolvedRange, resolveRange } from "../../lib/range";

/** Query parameters every insights endpoint shares (contract section 2). */
export const RangeParams = {
  range: v.optional(
    v.pipe(
      v.picklist(RANGE_PRESETS, `range must be one of ${RANGE_PRESETS.join(", ")}`),
      v.description("Preset window in `timezone` (default `7d`). `startDate` + `endDate` win over it."),
    ),
  ),
  startDate: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "`YYYY-MM-DD`, `YYYY-MM-DD HH:mm:ss` (local to `timezone`) or RFC 3339. Needs `endDate`.",
      ),
    ),
  ),
  endDate: v.optional(
    v.pipe(
      v.string(),
      v.description("Same formats as `startDate`; a date-only end covers that whole day. Needs `startDate`."),
    ),
  ),
  timezone: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "IANA zone for date-only bounds, presets and bucket edges (default: the project's, else UTC).",
      ),
    ),
  ),
  filters: FiltersParam,
};

export const SeriesParams = {
  interval: v.optional(
    v.pipe(
      v.picklist(INTERVALS, `interval must be one of ${INTERVALS.join(", ")}`),
      v.description("Bucket size. Default: same day → hour, ≤ 92 days → day, ≤ 186 → week, else month."),
    ),
  ),
  previous: v.optional(
    v.pipe(
      v.picklist(["true", "false"], "previous must be true or false"),
      v.description("Also return the previous period of the same length, ending where this one starts."),
    ),
    "false",
  ),
};

export interface RangeQuery {
  range?: (typeof RANGE_PRESETS)[number];
  startDate?: string;
  endDate?: string;
  timezone?: string;
  filters: RawFilter[];
  interval?: (typeof INTERVALS)[number];
  previous?: "true" | "false";
}

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

/** Whether rollups may answer (wrangler var ROLLUPS; "off" forces the exact path everywhere). */
export const rollupsAllowed = (c: Context<AppEnv>): boolean => c.env.ROLLUPS !== "off";

/** Resolves the window and filters of an insights request in the project's timezone by default. */
export function resolveInsightsScope(
  c: Context<AppEnv>,
  query: RangeQuery,
  options: { autoInterval: boolean },
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
  });
  return {
    range,
    filters: normalizeFilters(query.filters),
    rollups: rollupsAllowed(c),
    projectTimezone: c.get("project").timezone,
    fingerprint: {
      window: range.window,
      timezone: range.timezone,
      interval: range.interval,
      previous: range.previous?.window ?? null,
      filters: query.filters,
    },
  };
}

/** Metrics of ranges that reach the present stay fresh 60 s; closed past ranges 24 h (contract section 9). */
export function freshnessFor(range: ResolvedRange, now = Date.now()): number {
  return range.window.end > now ? 60 : 86_400;
}
