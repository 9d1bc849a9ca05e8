import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../env";
import { INTERVALS } from "../lib/buckets";
import { FiltersParam, type RawFilter } from "../lib/filter-parser";
import { RANGE_PRESETS } from "../lib/range";

/**
 * The request parameters the insights and export routes share: the window (contract section 2),
 * buckets and the previous period, filters, and the paging of lists. One definition each, so the
 * validation and the OpenAPI document are the same wherever they appear.
 */

/** One of `values`; anything else is a 400 naming `param` and listing them. */
export const OneOfParam = <const Values extends readonly string[]>(
  param: string,
  values: Values,
  description: string,
) => v.pipe(v.picklist(values, `${param} must be one of ${values.join(", ")}`), v.description(description));

/**
 * `true` or `false`; anything else is a 400 naming `param`. Query values are text on the wire; the
 * metadata tells the OpenAPI document (and clients generated from it) that this one is a boolean.
 */
export const FlagParam = (param: string, description: string) =>
  v.pipe(
    v.picklist(["true", "false"], `${param} must be true or false`),
    v.metadata({ type: "boolean" }),
    v.description(description),
  );

/** The window and filters of every insights route (contract section 2); `/export/charts` reuses them. */
export const RangeParams = {
  range: v.optional(
    OneOfParam(
      "range",
      RANGE_PRESETS,
      "Preset window in `timezone` (default `7d`). `startDate` + `endDate` win over it.",
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
    OneOfParam(
      "interval",
      INTERVALS,
      "Bucket size. Default: same day → hour, ≤ 92 days → day, ≤ 186 → week, else month.",
    ),
  ),
  previous: v.optional(
    FlagParam(
      "previous",
      "Also return the previous period of the same length, ending where this one starts.",
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

/** A whole number from 1 to `max` in the query string: anything else is a 400 naming `param`, never clamped. */
export const WholeNumberParam = (param: string, max: number, description: string) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `${param} must be a whole number from 1 to ${max}`),
    // The document shows what the text carries (see FlagParam).
    v.metadata({ type: "integer", minimum: 1, maximum: max }),
    v.toNumber(),
    v.minValue(1, `${param} must be from 1 to ${max}`),
    v.maxValue(max, `${param} must be from 1 to ${max}`),
    v.description(description),
  );

export const LimitParam = (defaultLimit: number, max = 1000) =>
  v.optional(
    WholeNumberParam(
      "limit",
      max,
      `Rows per page, 1–${max} (default ${defaultLimit}). Larger values are refused, never clamped.`,
    ),
    String(defaultLimit),
  );

export const CursorParam = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(600, "cursor is not one this API issued"),
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

/**
 * A list of strings in the query (contract A1): the key repeated (`steps=a&steps=b`), or one value
 * holding a JSON array of strings (recognised by its leading `[`). A comma is part of a value.
 */
export const StringListParam = (param: string, description: string) =>
  v.pipe(
    v.union([v.string(), v.array(v.string())], `${param} must be text; repeat the key for several values`),
    v.description(description),
    v.rawTransform<string | string[], string[]>(({ dataset, addIssue, NEVER }) => {
      const values = Array.isArray(dataset.value) ? dataset.value : [dataset.value];
      if (values.length === 1 && values[0]?.trimStart().startsWith("[")) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(values[0]);
        } catch {
          parsed = undefined;
        }
        if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === "string")) {
          addIssue({ message: `${param} starting with [ must be a JSON array of strings` });
          return NEVER;
        }
        return parsed;
      }
      return values;
    }),
  );
