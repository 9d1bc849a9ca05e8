import { and, desc, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { eventMeta, events, profiles } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";
import type { ExportedEvent } from "../../schemas/export-events";
import { eventConditions } from "../filter-conditions";
import { isoText } from "../sql-helpers";

/**
 * Raw event export (contract section 6): the events of one project newest first, `created_at`
 * desc then `id` desc, read in keyset pages over `events_project_time_idx (project_id,
 * created_at, id)`, so every page costs the same however deep it is.
 */

/** The groups of fields `includes` names (contract section 6), in record order. */
export const EVENT_INCLUDES = ["profile", "meta", "properties", "geo", "device", "referrer"] as const;
export type EventInclude = (typeof EVENT_INCLUDES)[number];

export interface EventExportScope {
  projectId: string;
  /** Event names; empty means every name. */
  names: string[];
  profileId?: string;
  /** Epoch ms, inclusive. */
  start?: number;
  /** Epoch ms, exclusive. */
  end?: number;
  filters: Filter[];
}

/** A place in the export order: the page after it starts with the next older event. */
export interface EventPosition {
  createdAt: number;
  id: string;
}

const ALWAYS = {
  id: events.id,
  name: events.name,
  deviceId: events.deviceId,
  profileId: events.profileId,
  sessionId: events.sessionId,
  projectId: events.projectId,
  createdAt: events.createdAt,
  path: events.path,
  duration: events.duration,
  revenue: events.revenue,
  country: events.country,
  city: events.city,
  os: events.os,
  browser: events.browser,
};

const PROFILE = {
  id: profiles.id,
  firstName: profiles.firstName,
  lastName: profiles.lastName,
  email: profiles.email,
  avatar: profiles.avatar,
  isExternal: profiles.isExternal,
  properties: profiles.properties,
  createdAt: profiles.createdAt,
  lastSeenAt: profiles.lastSeenAt,
};

const META = {
  name: eventMeta.name,
  description: eventMeta.description,
  conversion: eventMeta.conversion,
  color: eventMeta.color,
  icon: eventMeta.icon,
};

/** Event columns of the plain groups, in the order they appear in a record and a CSV row. */
const GROUP_COLUMNS = {
  properties: { properties: events.properties },
  geo: { region: events.region, latitude: events.latitude, longitude: events.longitude },
  device: {
    device: events.device,
    brand: events.brand,
    model: events.model,
    osVersion: events.osVersion,
    browserVersion: events.browserVersion,
  },
  referrer: {
    origin: events.origin,
    referrer: events.referrer,
    referrerName: events.referrerName,
    referrerType: events.referrerType,
    utmSource: events.utmSource,
    utmMedium: events.utmMedium,
    utmCampaign: events.utmCampaign,
    utmTerm: events.utmTerm,
    utmContent: events.utmContent,
  },
};

/** The event columns a record may add to ALWAYS, in record order (after `profile` and `meta`). */
const OPTIONAL_COLUMNS = {
  ...GROUP_COLUMNS.properties,
  ...GROUP_COLUMNS.geo,
  ...GROUP_COLUMNS.device,
  ...GROUP_COLUMNS.referrer,
};

/** A field of an exported record that is there only when `includes` asks for it. */
export type IncludedField = "profile" | "meta" | keyof typeof OPTIONAL_COLUMNS;

/** Every included field, in record order. */
const INCLUDED_FIELDS: readonly IncludedField[] = [
  "profile",
  "meta",
  ...(Object.keys(OPTIONAL_COLUMNS) as Array<keyof typeof OPTIONAL_COLUMNS>),
];

/** Fields every record has; naming one in `includes` is accepted and adds nothing. */
const ALWAYS_FIELDS: readonly string[] = Object.keys(ALWAYS);

const fieldsOfGroup = (group: EventInclude): IncludedField[] =>
  group === "profile" || group === "meta" ? [group] : (Object.keys(GROUP_COLUMNS[group]) as IncludedField[]);

/** What `includes` accepts: the group names, then every field name of a record. */
export const INCLUDE_TOKENS: readonly string[] = [
  ...EVENT_INCLUDES,
  ...new Set(
    [...ALWAYS_FIELDS, ...INCLUDED_FIELDS].filter(
      (field) => !(EVENT_INCLUDES as readonly string[]).includes(field),
    ),
  ),
];

/**
 * The fields one `includes` token adds: a group name its group's fields (`device` is the group,
 * whose first field is `device`), a field name that field, a field every record has none;
 * undefined for a token that is neither.
 */
export function fieldsOfInclude(token: string): IncludedField[] | undefined {
  if ((EVENT_INCLUDES as readonly string[]).includes(token)) return fieldsOfGroup(token as EventInclude);
  if ((INCLUDED_FIELDS as readonly string[]).includes(token)) return [token as IncludedField];
  return ALWAYS_FIELDS.includes(token) ? [] : undefined;
}

/** The event columns of a record with these fields (all but the joined profile and metadata). */
function plainColumns(includes: ReadonlySet<IncludedField>) {
  const optional = Object.entries(OPTIONAL_COLUMNS).filter(([field]) => includes.has(field as IncludedField));
  return { ...ALWAYS, ...Object.fromEntries(optional) };
}

/** The keys of a record with these fields, in record order: the CSV header row. */
export function exportedEventKeys(includes: ReadonlySet<IncludedField>): Array<keyof ExportedEvent> {
  return [...ALWAYS_FIELDS, ...INCLUDED_FIELDS.filter((field) => includes.has(field))] as Array<
    keyof ExportedEvent
  >;
}

/** Every filter of the export, shared by the page and the count so both always agree. */
export function scopeConditions(scope: EventExportScope): SQL | undefined {
  return and(
    eq(events.projectId, scope.projectId),
    // One bound text[] parameter however many names were asked for.
    scope.names.length > 0 ? sql`${events.name} = any(${sql.param(scope.names)}::text[])` : undefined,
    scope.profileId === undefined ? undefined : eq(events.profileId, scope.profileId),
    scope.start === undefined ? undefined : gte(events.createdAt, new Date(scope.start)),
    scope.end === undefined ? undefined : lt(events.createdAt, new Date(scope.end)),
    eventConditions(scope.filters),
  );
}

export const positionRow = (position: EventPosition) =>
  sql`(${new Date(position.createdAt).toISOString()}::timestamptz, ${position.id}::uuid)`;

/**
 * Events after `position` in the export order. A row comparison on the index columns, so Postgres
 * starts the backward index scan right at the position instead of counting rows off.
 */
function olderThan(position: EventPosition): SQL {
  return sql`(${events.createdAt}, ${events.id}) < ${positionRow(position)}`;
}

const iso = (value: Date) => value.toISOString();

export interface EventPageRequest {
  limit: number;
  /** Start after this event (keyset paging). */
  after?: EventPosition;
  /** Skip this many events first (OpenPanel's `page`); only for the first page of a request. */
  offset?: number;
}

/**
 * One page of the export as a query with any select list: the profile and metadata LEFT JOINs when
 * they are included (never a query per event), the scope, the position and the export order.
 */
function selectPage(
  db: Database,
  selection: Record<string, SQL | SQL.Aliased | AnyPgColumn>,
  scope: EventExportScope,
  includes: ReadonlySet<IncludedField>,
  page: EventPageRequest,
) {
  let query = db.select(selection).from(events).$dynamic();
  if (includes.has("profile")) {
    query = query.leftJoin(
      profiles,
      and(eq(profiles.projectId, events.projectId), eq(profiles.id, events.profileId)),
    );
  }
  if (includes.has("meta")) {
    query = query.leftJoin(
      eventMeta,
      and(eq(eventMeta.projectId, events.projectId), eq(eventMeta.name, events.name)),
    );
  }
  query = query
    .where(and(scopeConditions(scope), page.after ? olderThan(page.after) : undefined))
    .orderBy(desc(events.createdAt), desc(events.id))
    .limit(page.limit);
  return page.offset ? query.offset(page.offset) : query;
}

/**
 * The SQL of one page of the export (unexecuted, so its plan can be inspected). Profile and
 * metadata come from LEFT JOINs in the same query (never a query per event); a group's columns
 * are read only when it is included.
 */
export function eventPageQuery(
  db: Database,
  scope: EventExportScope,
  includes: ReadonlySet<IncludedField>,
  page: EventPageRequest,
) {
  return selectPage(
    db,
    {
      ...plainColumns(includes),
      // Prefixed flat columns, shaped below: drizzle's own nesting would depend on the join types.
      ...(includes.has("profile") ? prefixed("profile_", PROFILE) : {}),
      ...(includes.has("meta") ? prefixed("meta_", META) : {}),
    },
    scope,
    includes,
    page,
  );
}

/** One page of the export, newest first. */
export async function readEventPage(
  db: Database,
  scope: EventExportScope,
  includes: ReadonlySet<IncludedField>,
  page: EventPageRequest,
): Promise<ExportedEvent[]> {
  const rows: Array<Record<string, unknown>> = await eventPageQuery(db, scope, includes, page);
  const keys = exportedEventKeys(includes);
  return rows.map((row) => toExportedEvent(row, keys));
}

/** A timestamp as `toISOString()` writes it (UTC, milliseconds, `Z`). */

/** One page of the export as NDJSON lines and the position of its last event. */
export interface EventLines {
  /** Newline-terminated JSON records, the same objects `readEventPage` returns. */
  text: string;
  count: number;
  last?: EventPosition;
}

/**
 * One page of the export as NDJSON, with each record written by Postgres (`row_to_json` over
 * columns named and formatted as `toExportedEvent` names and formats them): a stream then costs
 * the Worker one text value per event instead of decoding, re-encoding and stringifying every
 * field, which doubles its throughput.
 */
export async function readEventLines(
  db: Database,
  scope: EventExportScope,
  includes: ReadonlySet<IncludedField>,
  page: EventPageRequest,
): Promise<EventLines> {
  const plain: Record<string, SQL | AnyPgColumn> = {
    ...plainColumns(includes),
    createdAt: isoText(events.createdAt),
  };
  // Each column aliased to its record key, so row_to_json names it as the JSON pages do.
  const aliased = (columns: Record<string, SQL | AnyPgColumn>) =>
    Object.fromEntries(Object.entries(columns).map(([key, column]) => [key, sql`${column}`.as(key)]));
  const nested = (columns: Record<string, SQL | AnyPgColumn>, present: AnyPgColumn) => {
    const list = sql.join(
      Object.entries(columns).map(([key, column]) => sql`${column} as ${sql.identifier(key)}`),
      sql`, `,
    );
    return sql`case when ${present} is null then null else (select row_to_json(nested) from (select ${list}) as nested) end`;
  };
  const columns: Record<string, SQL | AnyPgColumn> = {};
  for (const key of exportedEventKeys(includes)) {
    if (key === "profile") {
      columns.profile = nested(
        { ...PROFILE, createdAt: isoText(profiles.createdAt), lastSeenAt: isoText(profiles.lastSeenAt) },
        profiles.id,
      );
    } else if (key === "meta") {
      columns.meta = nested(META, eventMeta.name);
    } else {
      columns[key] = plain[key] as SQL | AnyPgColumn;
    }
  }
  const query = selectPage(db, aliased(columns), scope, includes, page);
  // Only the line travels: the position of the batch's end is read back from its last record,
  // which costs one JSON.parse per batch instead of two more columns per event.
  const result = await db.execute<{ line: string }>(
    sql`select row_to_json(record)::text as line from (${query}) as record`,
  );
  const rows = result.rows;
  const tail = rows.at(-1);
  return {
    text: rows.map((row) => `${row.line}\n`).join(""),
    count: rows.length,
    last: tail ? eventPosition(JSON.parse(tail.line) as ExportedEvent) : undefined,
  };
}

/** Where an exported record stands in the export order. */
export function eventPosition(record: Pick<ExportedEvent, "createdAt" | "id">): EventPosition {
  return { createdAt: Date.parse(record.createdAt), id: record.id };
}

function prefixed<Columns extends Record<string, unknown>>(prefix: string, columns: Columns) {
  return Object.fromEntries(
    Object.entries(columns).map(([key, column]) => [`${prefix}${key}`, column]),
  ) as Record<string, Columns[keyof Columns]>;
}

function unprefixed(row: Record<string, unknown>, prefix: string, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, row[`${prefix}${key}`]]));
}

/** A record with exactly the keys of its groups, in `exportedEventKeys` order. */
function toExportedEvent(row: Record<string, unknown>, keys: Array<keyof ExportedEvent>): ExportedEvent {
  const record: Record<string, unknown> = {};
  for (const key of keys) {
    if (key === "profile") {
      const profile = unprefixed(row, "profile_", Object.keys(PROFILE));
      // The profile's primary key is null exactly when the LEFT JOIN found nothing.
      record.profile =
        profile.id === null || profile.id === undefined
          ? null
          : {
              ...profile,
              createdAt: iso(profile.createdAt as Date),
              lastSeenAt: profile.lastSeenAt instanceof Date ? iso(profile.lastSeenAt) : null,
            };
    } else if (key === "meta") {
      const meta = unprefixed(row, "meta_", Object.keys(META));
      record.meta = meta.name === null || meta.name === undefined ? null : meta;
    } else if (key === "createdAt") {
      record.createdAt = iso(row.createdAt as Date);
    } else {
      record[key] = row[key];
    }
  }
  return record as unknown as ExportedEvent;
}

/** The position of event `id` of the project, or undefined when the project has no such event. */
export async function findEventPosition(
  db: Database,
  projectId: string,
  id: string,
): Promise<EventPosition | undefined> {
  const [row] = await db
    .select({ createdAt: events.createdAt, id: events.id })
    .from(events)
    .where(and(eq(events.projectId, projectId), eq(events.id, id)))
    .limit(1);
  return row ? { createdAt: row.createdAt.getTime(), id: row.id } : undefined;
}
