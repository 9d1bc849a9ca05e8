import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { decodeEventCursor, encodeEventCursor } from "../../lib/cursors";
import { ApiError } from "../../lib/errors";
import {
  attachmentFilename,
  csvLine,
  EXPORT_CONTENT_TYPES,
  EXPORT_FORMATS,
  type ExportFormat,
  negotiateExportFormat,
  streamBatches,
} from "../../lib/export-format";
import { FiltersParam, normalizeFilters } from "../../lib/filters";
import { LimitParam } from "../../lib/paging";
import { parseDateBound, requireTimeZone } from "../../lib/range";
import { closeDatabaseAfterStream, useDatabase } from "../../middleware/database";
import { sendJson } from "../../middleware/send-json";
import { validate } from "../../middleware/validate";
import {
  countEvents,
  EVENT_INCLUDES,
  type EventExportScope,
  type EventInclude,
  type EventLines,
  type EventPageRequest,
  type EventPosition,
  eventPosition,
  exportedEventKeys,
  findEventPosition,
  readEventLines,
  readEventPage,
} from "../../queries/export-events";
import { assertValidRegexes } from "../../queries/filters";
import { jsonContent, PROJECT_ROUTE_PROBLEMS, problemResponses } from "../openapi";

/** Rows per query while streaming: large enough to amortize a round trip, small enough for flat memory. */
const STREAM_BATCH_SIZE = 5_000;
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

const isEventInclude = (name: string): name is EventInclude =>
  (EVENT_INCLUDES as readonly string[]).includes(name);

const given = (value: string | undefined) => (value === undefined || value.trim() === "" ? undefined : value);

const EventsQuery = v.object({
  projectId: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "The project to export. A read client may omit it (its own project); a root client must give it.",
      ),
    ),
  ),
  project_id: v.optional(v.pipe(v.string(), v.description("Alias of `projectId`."))),
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
        `Extra fields, comma-separated and/or repeated: ${EVENT_INCLUDES.join(", ")}. ` +
          "`profile` adds the visitor's profile (or null), `meta` the event name's metadata (or null), " +
          "`properties` the event's properties, `geo` region/latitude/longitude, `device` " +
          "device/brand/model/osVersion/browserVersion, `referrer` origin, referrer and UTM fields.",
      ),
      v.examples(["profile,geo"]),
      v.transform((value) => listOf(value, true)),
      v.check(
        (names) => names.every(isEventInclude),
        (issue) => {
          const unknown = issue.input.filter((name) => !isEventInclude(name));
          const names = unknown.map((name) => JSON.stringify(name)).join(", ");
          return `unknown includes ${names}; use ${EVENT_INCLUDES.join(", ")}`;
        },
      ),
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
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `page must be a whole number from 1 to ${MAX_PAGE}`),
      v.toNumber(),
      v.minValue(1, `page must be from 1 to ${MAX_PAGE}`),
      v.maxValue(MAX_PAGE, `page must be from 1 to ${MAX_PAGE}`),
      v.description(
        "1-based page number (OpenPanel-style offset paging, kept for compatibility; deep pages cost more " +
          "than `cursor`). Adds `totalCount`, `pages` and `current` to `meta`.",
      ),
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
    v.pipe(
      v.picklist(["true", "false"], "totalCount must be true or false"),
      v.description("Add `totalCount`, `pages` and `current` to `meta` (one more count over the selection)."),
    ),
    "false",
  ),
  format: v.optional(
    v.pipe(
      v.picklist(EXPORT_FORMATS, `format must be one of ${EXPORT_FORMATS.join(", ")}`),
      v.description(
        "`json` (a page, the default), `ndjson` or `csv` (every matching event, streamed; `limit` caps it " +
          "when given). Without it, `Accept: application/x-ndjson` or `text/csv` choose the stream.",
      ),
    ),
  ),
});

type EventsQueryOutput = v.InferOutput<typeof EventsQuery>;

const nullableText = v.nullable(v.string());

const ExportedEventSchema = v.pipe(
  v.object({
    id: v.pipe(v.string(), v.description("Event id (UUID); pass it as `after` to resume after this event.")),
    name: v.string(),
    deviceId: v.string(),
    profileId: v.string(),
    sessionId: v.string(),
    projectId: v.string(),
    createdAt: v.pipe(
      v.string(),
      v.description("RFC 3339 in UTC with milliseconds, e.g. 2026-11-01T10:00:00.123Z."),
    ),
    path: nullableText,
    duration: v.pipe(v.number(), v.description("Time on page in milliseconds.")),
    revenue: v.pipe(v.number(), v.description("Revenue in cents.")),
    country: nullableText,
    city: nullableText,
    os: nullableText,
    browser: nullableText,
    profile: v.optional(
      v.pipe(
        v.nullable(
          v.object({
            id: v.string(),
            firstName: nullableText,
            lastName: nullableText,
            email: nullableText,
            avatar: nullableText,
            isExternal: v.boolean(),
            properties: v.record(v.string(), v.unknown()),
            createdAt: v.string(),
            lastSeenAt: nullableText,
          }),
        ),
        v.description("`includes=profile`: the profile of `profileId`, or null when there is none."),
      ),
    ),
    meta: v.optional(
      v.pipe(
        v.nullable(
          v.object({
            name: v.string(),
            description: nullableText,
            conversion: v.boolean(),
            color: nullableText,
            icon: nullableText,
          }),
        ),
        v.description("`includes=meta`: metadata of the event name, or null when there is none."),
      ),
    ),
    properties: v.optional(
      v.pipe(v.record(v.string(), v.unknown()), v.description("`includes=properties`.")),
    ),
    region: v.optional(v.pipe(nullableText, v.description("`includes=geo`."))),
    latitude: v.optional(v.pipe(v.nullable(v.number()), v.description("`includes=geo`."))),
    longitude: v.optional(v.pipe(v.nullable(v.number()), v.description("`includes=geo`."))),
    device: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    brand: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    model: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    osVersion: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    browserVersion: v.optional(v.pipe(nullableText, v.description("`includes=device`."))),
    origin: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    referrer: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    referrerName: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    referrerType: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmSource: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmMedium: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmCampaign: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmTerm: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
    utmContent: v.optional(v.pipe(nullableText, v.description("`includes=referrer`."))),
  }),
  v.metadata({ ref: "ExportedEvent" }),
);

const EventPageSchema = v.object({
  meta: v.object({
    count: v.pipe(v.number(), v.description("Events in `data`.")),
    limit: v.number(),
    hasMore: v.pipe(v.boolean(), v.description("More events follow this page.")),
    next: v.pipe(v.nullable(v.string()), v.description("Cursor of the next page, or null on the last one.")),
    totalCount: v.optional(
      v.pipe(v.number(), v.description("With `page` or `totalCount=true`: all events of the selection.")),
    ),
    pages: v.optional(
      v.pipe(v.number(), v.description("With `page` or `totalCount=true`: pages of `limit`.")),
    ),
    current: v.optional(
      v.pipe(v.number(), v.description("With `page` or `totalCount=true`: the number of this page.")),
    ),
  }),
  data: v.array(ExportedEventSchema),
});

const streamContent = (description: string) => ({ schema: { type: "string" as const, description } });

/** Where the page starts: after a position, at an offset (OpenPanel's `page`), or at the newest event. */
interface StartingPoint {
  position?: EventPosition;
  offset?: number;
  page?: number;
}

/** At most one of `cursor`, `after` and `page` says where to start; each bad value is a 400 naming it. */
async function resolveStart(
  c: Context<AppEnv>,
  query: EventsQueryOutput,
  projectId: string,
): Promise<StartingPoint> {
  const cursor = given(query.cursor);
  const after = given(query.after)?.trim().toLowerCase();
  const starts = [
    ...(cursor === undefined ? [] : ["cursor"]),
    ...(after === undefined ? [] : ["after"]),
    ...(query.page === undefined ? [] : ["page"]),
  ];
  if (starts.length > 1) {
    const message = `use only one of cursor, after and page; got ${starts.join(" and ")}`;
    throw new ApiError({
      code: "VALIDATION_FAILED",
      detail: message,
      errors: starts.map((path) => ({ path, message })),
    });
  }
  if (cursor !== undefined) {
    const position = decodeEventCursor(cursor);
    if (!position) {
      throw ApiError.invalid("cursor", "cursor is not one this API issued; start again without it");
    }
    return { position };
  }
  if (after !== undefined) {
    const position = await findEventPosition(useDatabase(c), projectId, after);
    if (!position) throw ApiError.invalid("after", `after: this project has no event with id ${after}`);
    return { position };
  }
  if (query.page !== undefined) return { offset: (query.page - 1) * query.limit, page: query.page };
  return {};
}

function resolveScope(query: EventsQueryOutput, projectId: string): EventExportScope {
  const timezone = requireTimeZone(query.timezone ?? "UTC");
  const startText = given(query.start);
  const endText = given(query.end);
  const start = startText === undefined ? undefined : parseDateBound(startText, timezone, "start", "start");
  const end = endText === undefined ? undefined : parseDateBound(endText, timezone, "end", "end");
  if (start !== undefined && end !== undefined && start >= end) {
    throw ApiError.invalid("end", "end must not be before start");
  }
  return {
    projectId,
    names: query.event ?? [],
    profileId: given(query.profileId),
    start,
    end,
    filters: normalizeFilters(query.filters),
  };
}

/** `Link` and `X-Next-Cursor` of the next page: the request's URL, `cursor` in place of `page`/`after`. */
function nextPageLinks(requestUrl: string, next: string | null): Record<string, string> {
  if (next === null) return {};
  const url = new URL(requestUrl);
  url.searchParams.delete("page");
  url.searchParams.delete("after");
  url.searchParams.set("cursor", next);
  return { Link: `<${url.toString()}>; rel="next"`, "X-Next-Cursor": next };
}

async function answerPage(
  c: Context<AppEnv>,
  query: EventsQueryOutput,
  scope: EventExportScope,
  includes: ReadonlySet<EventInclude>,
  start: StartingPoint,
): Promise<Response> {
  const db = useDatabase(c);
  const withTotals = start.page !== undefined || query.totalCount === "true";
  // One row more than asked tells whether another page follows.
  const [rows, counts] = await Promise.all([
    readEventPage(db, scope, includes, {
      limit: query.limit + 1,
      after: start.position,
      offset: start.offset,
    }),
    withTotals ? countEvents(db, scope, start.position) : undefined,
  ]);
  const data = rows.slice(0, query.limit);
  const last = data.at(-1);
  const hasMore = rows.length > query.limit;
  const next = hasMore && last ? encodeEventCursor(eventPosition(last)) : null;
  const totals = counts && {
    totalCount: counts.total,
    pages: Math.ceil(counts.total / query.limit),
    current: start.page ?? Math.floor(counts.before / query.limit) + 1,
  };
  return sendJson(c, {
    body: { meta: { count: data.length, limit: query.limit, hasMore, next, ...totals }, data },
    headers: nextPageLinks(c.req.url, next),
  });
}

async function answerStream(
  c: Context<AppEnv>,
  format: Exclude<ExportFormat, "json">,
  query: EventsQueryOutput,
  scope: EventExportScope,
  includes: ReadonlySet<EventInclude>,
  start: StartingPoint,
): Promise<Response> {
  const db = useDatabase(c);
  // Everything by default; an explicit `limit` (or a `page`) caps the stream.
  const total =
    c.req.query("limit") !== undefined || start.page !== undefined ? query.limit : Number.POSITIVE_INFINITY;
  const keys = exportedEventKeys(includes);
  // NDJSON records are written by Postgres; CSV rows are encoded here from the decoded events.
  const readBatch = async (page: EventPageRequest): Promise<EventLines> => {
    if (format === "ndjson") return readEventLines(db, scope, includes, page);
    const rows = await readEventPage(db, scope, includes, page);
    const tail = rows.at(-1);
    return {
      text: rows.map((event) => csvLine(keys.map((key) => event[key]))).join(""),
      count: rows.length,
      last: tail ? eventPosition(tail) : undefined,
    };
  };
  // The first batch is read before the response starts, so its failures are still problem+json.
  const firstSize = Math.min(STREAM_BATCH_SIZE, total);
  const first = await readBatch({ limit: firstSize, after: start.position, offset: start.offset });
  const filename = attachmentFilename(`events-${scope.projectId}`, format);
  const headers = {
    "Content-Type": EXPORT_CONTENT_TYPES[format],
    "Content-Disposition": `attachment; filename="${filename}"`,
    "Cache-Control": "private, no-store",
    "X-Content-Type-Options": "nosniff",
  };
  // HEAD drops the body unread: no stream, and the pool closes with the response as usual.
  if (c.req.method === "HEAD") return c.body(null, 200, headers);

  let sent = first.count;
  let complete = first.count < firstSize || sent >= total;
  // The next batch is read while the current one is sent (one batch ahead, so the database and
  // the client work at the same time; memory holds at most two batches).
  const readAfter = (position: EventPosition | undefined) => {
    if (complete || !position) return undefined;
    const size = Math.min(STREAM_BATCH_SIZE, total - sent);
    const read = readBatch({ limit: size, after: position }).then((batch) => ({ batch, size }));
    // Awaited by the next pull; a cancelled stream never pulls, and its failure is no one's.
    read.catch(() => {});
    return read;
  };
  let ahead = readAfter(first.last);
  const requestId = c.get("requestId");
  const stream = streamBatches({
    first: (format === "csv" ? csvLine(keys) : "") + first.text,
    async next() {
      if (!ahead) return undefined;
      const { batch, size } = await ahead;
      sent += batch.count;
      complete = batch.count < size || sent >= total;
      ahead = readAfter(batch.last);
      return batch.text;
    },
    onError(error) {
      console.error(`[${requestId}] event export stream ended early`, error);
    },
  });
  closeDatabaseAfterStream(c, stream.finished);
  return c.body(stream.body, 200, headers);
}

export const events = new Hono<AppEnv>().get(
  "/events",
  describeRoute({
    tags: ["Export"],
    summary: "Export raw events",
    description: `Events of one project, newest first (\`createdAt\` desc, then \`id\` desc).

**JSON pages** (default): \`{ meta: { count, limit, hasMore, next }, data }\`. Pass \`meta.next\` as
\`cursor\` for the next page: keyset paging, so every page costs the same however deep, and events
written after the first page never shift later pages. \`page\` (1-based offset paging) is kept for
OpenPanel clients; it and \`totalCount=true\` add \`totalCount\`, \`pages\` and \`current\`.
\`after=<event id>\` resumes right after that event. \`cursor\`, \`after\` and \`page\` exclude each other.

**Streams**: \`format=ndjson\` or \`format=csv\` (or \`Accept: application/x-ndjson\` / \`text/csv\`)
send every matching event (at most \`limit\` when it is given) in the same order as an attachment,
read in batches as the client consumes them. CSV has a header row (RFC 4180 quoting, CRLF line
ends); \`profile\`, \`meta\` and \`properties\` are JSON text in their cell; null is an empty cell, an
empty string \`""\`. A stream that fails after it started is cut off (the body ends incomplete, never
with an error document): resume with \`after=<id of the last complete record>\`.`,
    responses: {
      200: {
        description: "A page of events (JSON) or the whole selection (NDJSON, CSV)",
        content: {
          ...jsonContent(EventPageSchema),
          "application/x-ndjson": streamContent("One ExportedEvent JSON object per line."),
          "text/csv": streamContent("A header row, then one ExportedEvent per row."),
        },
      },
      304: { description: "Not modified (If-None-Match matched the ETag of a JSON page)" },
      ...problemResponses(...PROJECT_ROUTE_PROBLEMS),
    },
  }),
  validate("query", EventsQuery),
  async (c) => {
    const query = c.req.valid("query");
    const format = negotiateExportFormat(query.format, c.req.header("accept"));
    const projectId = c.get("project").id;
    const scope = resolveScope(query, projectId);
    const includes = new Set((query.includes ?? []).filter(isEventInclude));
    const start = await resolveStart(c, query, projectId);
    await assertValidRegexes(useDatabase(c), scope.filters);
    if (format === "json") return answerPage(c, query, scope, includes, start);
    return answerStream(c, format, query, scope, includes, start);
  },
);
