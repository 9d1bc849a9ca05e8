import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../env";
import { FiltersParam, type RawFilter } from "../lib/filter-parser";
import { INTERVALS, RANGE_PRESETS } from "../lib/range";

/**
 * The request parameters the insights and export routes share: the window (contract section 2),
 * buckets and the previous period, filters, and the paging of lists. One definition each, so the
 * validation and the OpenAPI document are the same wherever they appear.
 */

/** The window and filters of every insights route (contract section 2); `/export/charts` reuses them. */
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

export const LimitParam = (defaultLimit: number, max = 1000) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `limit must be a whole number from 1 to ${max}`),
      v.toNumber(),
      v.minValue(1, `limit must be from 1 to ${max}`),
      v.maxValue(max, `limit must be from 1 to ${max}`),
      v.description(
        `Rows per page, 1–${max} (default ${defaultLimit}). Larger values are refused, never clamped.`,
      ),
    ),
    String(defaultLimit),
  );

export const CursorParam = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(200, "cursor is not one this API issued"),
    v.description("Opaque cursor from the previous page's `X-Next-Cursor` header (or its `Link: rel=next`)."),
  ),
);

/** The project of an export request: a read client may leave it out (its own project). */
export const ProjectParams = {
  projectId: v.optional(
    v.pipe(
      v.string(),
      v.description("The project; a read client may omit it (its own project), a root client must give it."),
    ),
  ),
  project_id: v.optional(v.pipe(v.string(), v.description("Alias of `projectId`."))),
};

/** Whether rollups may answer (wrangler var ROLLUPS; "off" forces the exact path everywhere). */
export const rollupsAllowed = (c: Context<AppEnv>): boolean => c.env.ROLLUPS !== "off";
