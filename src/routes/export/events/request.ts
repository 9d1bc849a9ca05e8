import type { Database } from "../../../db/client";
import { decodeEventCursor } from "../../../lib/cursors";
import { ApiError } from "../../../lib/errors";
import { normalizeFilters } from "../../../lib/filter-parser";
import { parseDateBound, requireTimeZone } from "../../../lib/range";
import { given } from "../../../lib/validation";
import {
  type EventExportScope,
  type EventPosition,
  findEventPosition,
  type IncludedField,
} from "../../../queries/export/events";
import type { EventsQueryOutput } from "./schema";

/** A validated `/export/events` request turned into the export's selection and starting point. */

/** What an export answers: the request, its selection, the groups of fields and where it starts. */
export interface ExportRequest {
  query: EventsQueryOutput;
  scope: EventExportScope;
  includes: ReadonlySet<IncludedField>;
  start: StartingPoint;
}

/** Where the page starts: after a position, at an offset (OpenPanel's `page`), or at the newest event. */
export interface StartingPoint {
  position?: EventPosition;
  offset?: number;
  page?: number;
}

/** At most one of `cursor`, `after` and `page` says where to start; each bad value is a 400 naming it. */
export async function resolveStart(
  db: Database,
  query: EventsQueryOutput,
  projectId: string,
  cursorSecret: string,
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
    const position = await decodeEventCursor(cursorSecret, cursor);
    if (!position) {
      throw ApiError.invalid("cursor", "cursor is not one this API issued; start again without it");
    }
    return { position };
  }
  if (after !== undefined) {
    const position = await findEventPosition(db, projectId, after);
    if (!position) throw ApiError.invalid("after", `after: this project has no event with id ${after}`);
    return { position };
  }
  if (query.page !== undefined) return { offset: (query.page - 1) * query.limit, page: query.page };
  return {};
}

/** The selection of an export: project, names, visitor, window and filters. */
export function resolveScope(query: EventsQueryOutput, projectId: string): EventExportScope {
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
