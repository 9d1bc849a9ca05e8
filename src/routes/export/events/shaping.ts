import type { Context } from "hono";
import type { AppEnv } from "../../../env";
import { cursorSecret, encodeEventCursor } from "../../../lib/cursors";
import { ApiError, classifyDatabaseError } from "../../../lib/errors";
import {
  attachmentFilename,
  csvLine,
  EXPORT_CONTENT_TYPES,
  type ExportFormat,
  streamBatches,
  streamFailureText,
} from "../../../lib/export-format";
import { logFailure } from "../../../lib/failure-log";
import { nextPageHeaders } from "../../../lib/paging";
import { closeDatabaseAfterStream, useDatabase } from "../../../middleware/database";
import { sendJson } from "../../../middleware/send-json";
import { countExportedEvents } from "../../../queries/export/event-counts";
import {
  type EventLines,
  type EventPageRequest,
  type EventPosition,
  eventPosition,
  exportedEventKeys,
  readEventLines,
  readEventPage,
} from "../../../queries/export/events";
import type { EventPage } from "../../../schemas/export-events";
import type { ExportRequest } from "./request";

/** The answers of `/export/events`: a JSON page, or a stream of every matching event. */

/** Rows per query while streaming: large enough to amortize a round trip, small enough for flat memory. */
const STREAM_BATCH_SIZE = 5_000;

/** One JSON page, with the next page's cursor and, when asked, the totals. */
export async function answerPage(c: Context<AppEnv>, request: ExportRequest): Promise<Response> {
  const { query, scope, includes, start } = request;
  const db = useDatabase(c);
  const withTotals = start.page !== undefined || query.totalCount === "true";
  // One row more than asked tells whether another page follows.
  const [rows, counts] = await Promise.all([
    readEventPage(db, scope, includes, {
      limit: query.limit + 1,
      after: start.position,
      offset: start.offset,
    }),
    withTotals ? countExportedEvents(db, scope, start.position) : undefined,
  ]);
  const data = rows.slice(0, query.limit);
  const last = data.at(-1);
  const hasMore = rows.length > query.limit;
  const next = hasMore && last ? await encodeEventCursor(cursorSecret(c.env), eventPosition(last)) : null;
  const totals = counts && {
    totalCount: counts.total,
    pages: Math.ceil(counts.total / query.limit),
    current: start.page ?? Math.floor(counts.before / query.limit) + 1,
  };
  const body: EventPage = {
    meta: { count: data.length, limit: query.limit, hasMore, next, ...totals },
    data,
  };
  return sendJson(c, {
    body,
    headers: nextPageHeaders(c.req.url, next, ["page", "after"]),
  });
}

/** The whole selection as NDJSON or CSV, streamed batch by batch. */
export async function answerStream(
  c: Context<AppEnv>,
  format: Exclude<ExportFormat, "json">,
  request: ExportRequest,
): Promise<Response> {
  const { query, scope, includes, start } = request;
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
  // The last record handed to the stream: where a client resumes after a failure.
  let lastSent = first.last;
  const requestId = c.get("requestId");
  const stream = streamBatches({
    first: (format === "csv" ? csvLine(keys) : "") + first.text,
    async next() {
      if (!ahead) return undefined;
      const { batch, size } = await ahead;
      sent += batch.count;
      complete = batch.count < size || sent >= total;
      ahead = readAfter(batch.last);
      lastSent = batch.last ?? lastSent;
      return batch.text;
    },
    onError(error) {
      logFailure("error", { event: "export_stream_failed", requestId }, error);
    },
    async failure(error) {
      const cause = classifyDatabaseError(error) ?? ApiError.internal();
      return streamFailureText(format, {
        code: cause.code,
        status: cause.status,
        message: `The export failed before its end: ${cause.message} Resume with after (or cursor) to get the rest.`,
        requestId,
        after: lastSent?.id ?? null,
        cursor: lastSent ? await encodeEventCursor(cursorSecret(c.env), lastSent) : null,
      });
    },
  });
  closeDatabaseAfterStream(c, stream.finished);
  // `sent` counts the records handed to the stream by the time it ends.
  c.set(
    "streamed",
    stream.finished.then((report) => ({ ...report, rows: sent })),
  );
  return c.body(stream.body, 200, headers);
}
