import * as v from "valibot";
import { EXPORT_FORMATS } from "../../../lib/export-format";
import { FiltersParam } from "../../../lib/filter-parser";
import { EVENT_INCLUDES, fieldsOfInclude, INCLUDE_TOKENS } from "../../../queries/export/events";
import { FlagParam, LimitParam, OneOfParam, ProjectParams, WholeNumberParam } from "../../params";

/** The query parameters of `/export/events` (contract section 6), validated and documented. */

const MAX_EVENT_NAMES = 100;
const MAX_PAGE = 1_000_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Values of a repeatable parameter: Hono's query validator hands a repeated key over as an array. */
const Repeatable = v.union(
  [v.string(), v.array(v.string())],
  "must be text; repeat the key for several values",
);

/** The non-blank values, each split on commas when `splitCommas` is set. */
function listOf(value: string | string[] | undefined, splitCommas: boolean): string[] {
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return values
    .flatMap((item) => (splitCommas ? item.split(",") : [item]))
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

export const EventsQuery = v.object({
  ...ProjectParams,
  event: v.optional(
    v.pipe(
      Repeatable,
      v.description(
        "Only events with this name. Repeat the key for several names " +
          "(`event=signup&event=purchase`); at most 100.",
      ),
      v.transform((value) => listOf(value, false)),
      v.check((names) => names.length <= MAX_EVENT_NAMES, `event takes at most ${MAX_EVENT_NAMES} names`),
    ),
  ),
  profileId: v.optional(
    v.pipe(
      v.string(),
      v.description("Only this visitor's events (`profile_id`); the count agrees with the data."),
    ),
  ),
  start: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "Earliest event time, inclusive: `YYYY-MM-DD`, `YYYY-MM-DD HH:mm:ss` (local to `timezone`) " +
          "or RFC 3339. May be given alone.",
      ),
    ),
  ),
  end: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "Latest event time, inclusive, same formats as `start`: a date-only end covers that whole day. " +
          "May be given alone.",
      ),
    ),
  ),
  timezone: v.optional(
    v.pipe(v.string(), v.description("IANA zone of date-only and local `start`/`end` (default UTC).")),
  ),
  filters: FiltersParam,
  includes: v.optional(
    v.pipe(
      Repeatable,
      v.description(
        `Extra fields, comma-separated and/or repeated: the groups ${EVENT_INCLUDES.join(", ")}, ` +
          "or any field name of an exported event (camelCase, as in the record: `region`, `longitude`, " +
          "`referrerName`, `utmSource`…), each adding that field; a field every record has is accepted and " +
          "adds nothing. `profile` adds the visitor's profile (or null), `meta` the event name's metadata " +
          "(or null), `properties` the event's properties, `geo` region/latitude/longitude, `device` " +
          "device/brand/model/osVersion/browserVersion, `referrer` origin, referrer and UTM fields. " +
          "A group name wins over the field of the same name (`device`, `referrer`).",
      ),
      v.examples(["profile,geo", "region,longitude,referrerName"]),
      v.transform((value) => listOf(value, true)),
      v.check(
        (tokens) => tokens.every((token) => fieldsOfInclude(token) !== undefined),
        (issue) => {
          const unknown = issue.input.filter((token) => fieldsOfInclude(token) === undefined);
          const names = unknown.map((token) => JSON.stringify(token)).join(", ");
          return `unknown includes ${names}; use ${INCLUDE_TOKENS.join(", ")}`;
        },
      ),
      v.transform((tokens) => tokens.flatMap((token) => fieldsOfInclude(token) ?? [])),
    ),
  ),
  limit: LimitParam(50),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, "cursor is not one this API issued"),
      v.description(
        "Opaque cursor from the previous page's `meta.next` (also in `X-Next-Cursor` and `Link`).",
      ),
    ),
  ),
  page: v.optional(
    WholeNumberParam(
      "page",
      MAX_PAGE,
      "1-based page number (OpenPanel-style offset paging, kept for compatibility; deep pages cost more " +
        "than `cursor`). Adds `totalCount`, `pages` and `current` to `meta`.",
    ),
  ),
  after: v.optional(
    v.pipe(
      v.string(),
      v.check((id) => id.trim() === "" || UUID.test(id.trim()), "after must be an event id (a UUID)"),
      v.description(
        "Resume after this event: the `id` of the last event received (e.g. from an interrupted stream).",
      ),
    ),
  ),
  totalCount: v.optional(
    FlagParam(
      "totalCount",
      "Add `totalCount`, `pages` and `current` to `meta` (one more count over the selection).",
    ),
    "false",
  ),
  format: v.optional(
    OneOfParam(
      "format",
      EXPORT_FORMATS,
      "`json` (a page, the default), `ndjson` or `csv` (every matching event, streamed; `limit` caps it " +
        "when given). Without it, `Accept: application/x-ndjson` or `text/csv` choose the stream.",
    ),
  ),
});

export type EventsQueryOutput = v.InferOutput<typeof EventsQuery>;

export const streamContent = (description: string) => ({ schema: { type: "string" as const, description } });
