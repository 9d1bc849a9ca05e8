/**
 * Wire formats of the event export (contract section 6): format negotiation, NDJSON and CSV
 * encoding, and the pull-based body that streams an export batch by batch.
 */

export const EXPORT_FORMATS = ["json", "ndjson", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  json: "application/json; charset=utf-8",
  ndjson: "application/x-ndjson",
  csv: "text/csv; charset=utf-8",
};

const ACCEPTED_MEDIA_TYPES: Record<string, ExportFormat> = {
  "application/json": "json",
  "application/x-ndjson": "ndjson",
  // The registered name; some clients send it rather than the x- form.
  "application/ndjson": "ndjson",
  "text/csv": "csv",
};

/**
 * The format of an export: the `format` parameter when given, else the `Accept` media type with
 * the highest quality among those the export speaks (the first listed on a tie), else JSON.
 * An Accept header naming none of them is not an error: it gets JSON, as `*∕*` would.
 */
export function negotiateExportFormat(
  format: ExportFormat | undefined,
  accept: string | undefined,
): ExportFormat {
  if (format) return format;
  let best: { format: ExportFormat; quality: number } | undefined;
  for (const range of (accept ?? "").split(",")) {
    const [type = "", ...parameters] = range.split(";").map((part) => part.trim());
    const candidate = ACCEPTED_MEDIA_TYPES[type.toLowerCase()];
    if (!candidate) continue;
    const q = parameters.find((parameter) => /^q=/i.test(parameter));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (!(quality > 0)) continue;
    if (!best || quality > best.quality) best = { format: candidate, quality };
  }
  return best?.format ?? "json";
}

/** What a spreadsheet would read as the start of a formula (OWASP's list for CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal number, which a spreadsheet reads as a number even with its sign. */
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * One CSV cell (RFC 4180). Null is an empty cell and an empty string a quoted empty cell (`""`),
 * so the two stay apart; objects are their JSON text. A cell with a comma, a quote, CR or LF is
 * quoted, its quotes doubled; line breaks stay inside the quotes. Text that a spreadsheet would
 * run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR: paths, titles and properties come
 * from end users' browsers) is neutralised as OWASP recommends: prefixed with `'` and quoted.
 * Plain numbers, signed ones included, stay as they are.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (text === "") return '""';
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) return `"'${text.replace(/"/g, '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record, CRLF-terminated as RFC 4180 asks. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}

/** A filename token safe inside `Content-Disposition`'s quoted string. */
export function attachmentFilename(stem: string, format: Exclude<ExportFormat, "json">): string {
  return `${stem.replace(/[^A-Za-z0-9._-]/g, "_")}.${format}`;
}

export interface TextBatches {
  /** Text read before the response started (the CSV header and the first batch). */
  first: string;
  /** The next batch's text, or undefined once the export is complete. */
  next(): Promise<string | undefined>;
  /** Called with an error that ended the stream after the headers were sent. */
  onError(error: unknown): void;
  /** The last text to send when the stream fails (the format's error record), before it aborts. */
  failure?(error: unknown): string | Promise<string>;
}

/** What a failed stream tells its client in its last record, and where to resume. */
export interface StreamFailure {
  code: string;
  status: number;
  message: string;
  requestId: string;
  /** The id of the last complete event sent, and its cursor: resume with `after` or `cursor`. */
  after: string | null;
  cursor: string | null;
}

/**
 * The record that ends a failed export, so a client can tell it from a complete one even where
 * the transport ends the body cleanly: NDJSON, one line `{"error": {…}}` (no event has an `error`
 * key); CSV, a row whose first cell is `#error`, then the code, status, message, request id,
 * `after` and `cursor`.
 */
export function streamFailureText(format: Exclude<ExportFormat, "json">, failure: StreamFailure): string {
  if (format === "ndjson") return `${JSON.stringify({ error: failure })}\n`;
  const { code, status, message, requestId, after, cursor } = failure;
  return csvLine(["#error", code, status, message, requestId, after, cursor]);
}

/** How a stream ended, and the bytes it handed to the runtime (for the request's log line). */
export interface StreamReport {
  bytes: number;
  outcome: "complete" | "failed" | "cancelled";
}

export interface BatchStream {
  body: ReadableStream<Uint8Array>;
  /** Settles once the stream is closed, has failed or was cancelled by the client. */
  finished: Promise<StreamReport>;
}

/**
 * A response body that reads one batch per `pull`: the runtime pulls only when the client has
 * taken what was sent (backpressure), so at most one batch is held in memory at a time and the
 * first bytes leave before the rest is read.
 *
 * A failure after the first byte cannot become a problem+json any more (status and headers are
 * gone): the format's error record (`failure`) is sent as the last text, then the stream is
 * errored, which aborts the chunked body without its final chunk where the transport lets it. A
 * client sees the error record, or at least an incomplete response, never a silently short
 * export, and resumes with `after=<id of the last complete record>`.
 */
export function streamBatches(batches: TextBatches): BatchStream {
  const encoder = new TextEncoder();
  let bytes = 0;
  let resolveFinished: (report: StreamReport) => void = () => {};
  const finished = new Promise<StreamReport>((resolve) => {
    resolveFinished = resolve;
  });
  const settle = (outcome: StreamReport["outcome"]) => resolveFinished({ bytes, outcome });
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
    const chunk = encoder.encode(text);
    bytes += chunk.byteLength;
    controller.enqueue(chunk);
  };
  let sentFirst = false;
  // After a cancel (the client went away) a batch still in flight is dropped, not reported.
  let cancelled = false;
  // A failure whose error record was sent: the next pull aborts the body (erroring at once would
  // drop the record still queued).
  let failed: { error: unknown } | undefined;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (failed) {
        controller.error(failed.error);
        settle("failed");
        return;
      }
      try {
        if (!sentFirst) {
          sentFirst = true;
          if (batches.first !== "") {
            send(controller, batches.first);
            return;
          }
        }
        // Loop so an empty batch never leaves a pull without a chunk or an end.
        for (;;) {
          const text = await batches.next();
          if (cancelled) return;
          if (text === undefined) {
            controller.close();
            settle("complete");
            return;
          }
          if (text !== "") {
            send(controller, text);
            return;
          }
        }
      } catch (error) {
        if (cancelled) {
          settle("cancelled");
          return;
        }
        batches.onError(error);
        const record = await batches.failure?.(error);
        if (record) {
          send(controller, record);
          failed = { error };
          return;
        }
        controller.error(error);
        settle("failed");
      }
    },
    cancel() {
      cancelled = true;
      settle("cancelled");
    },
  });
  return { body, finished };
}
