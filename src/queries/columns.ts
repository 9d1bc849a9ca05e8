import { getTableColumns } from "drizzle-orm";
import type { alias, PgColumn } from "drizzle-orm/pg-core";
import { events, sessions } from "../db/schema";
import type { FilterColumn, SessionAttribute } from "../lib/filter-parser";

/**
 * The one map from a wire field name (filters, breakdowns, dimensions) to a column. Wire names are
 * the tables' own SQL column names, so the map is read off the schema: nothing to keep in step by
 * hand. The one exception is `session_id`, which a `sessions` row calls `id`.
 */

/** The events table, or an alias of it (`alias(events, "e")`). */
export type EventsTable = typeof events | ReturnType<typeof alias<typeof events, string>>;
export type SessionsTable = typeof sessions | ReturnType<typeof alias<typeof sessions, string>>;

type EventKey = keyof typeof events.$inferSelect;
type SessionKey = keyof typeof sessions.$inferSelect;

function keysBySqlName<Key extends string>(columns: Record<Key, PgColumn>): Map<string, Key> {
  return new Map(Object.entries<PgColumn>(columns).map(([key, column]) => [column.name, key as Key]));
}

const EVENT_KEYS: ReadonlyMap<string, EventKey> = keysBySqlName<EventKey>(getTableColumns(events));
const SESSION_KEYS: ReadonlyMap<string, SessionKey> = new Map([
  ...keysBySqlName<SessionKey>(getTableColumns(sessions)),
  ["session_id", "id"],
]);

function keyOf<Key>(keys: ReadonlyMap<string, Key>, name: string, table: string): Key {
  const key = keys.get(name);
  // Unreachable after validation: every filter column is a column of both tables it is asked of.
  if (key === undefined) throw new Error(`no ${table} column ${name}`);
  return key;
}

/** The column of `table` (events or an alias of it) that holds a field. */
export function eventColumn(field: FilterColumn, table: EventsTable = events): PgColumn {
  return table[keyOf(EVENT_KEYS, field, "events")];
}

/** The column of `table` (sessions or an alias of it) that holds a session attribute. */
export function sessionColumn(attribute: SessionAttribute, table: SessionsTable = sessions): PgColumn {
  return table[keyOf(SESSION_KEYS, attribute, "sessions")];
}
