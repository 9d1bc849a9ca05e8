import { and, eq, gte, lt, SQL, sql } from "drizzle-orm";
import { type AnyPgColumn, alias, type PgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../db/client";
import { postgresError } from "../db/connection-errors";
import { events, sessionNames, sessionPages, sessionProperties, sessions } from "../db/schema";
import { ApiError } from "../lib/errors";
import type { Filter, FilterColumn, FilterField } from "../lib/filter-parser";
import { type EventsTable, eventColumn, sessionColumn } from "./columns";
import { POSITIVE_COUNTERPART, propertyAnswer } from "./property-leaves";
import { NUMERIC_TEXT_SQL } from "./sql-helpers";

/**
 * The one filter compiler of the service (contract section 3). Every value and property key is a
 * bound parameter; the only text spliced into SQL is column names and fixed operators.
 */

/** The events, pages and session row of a session, inside the EXISTS of a filter on sessions. */
const FILTER_EVENT = "filter_event";
const filterEvents = alias(events, FILTER_EVENT);
const FILTER_PAGE = "filter_page";
const filterPages = alias(sessionPages, FILTER_PAGE);
const FILTER_NAME = "filter_name";
const filterNames = alias(sessionNames, FILTER_NAME);
const FILTER_PROPERTY = "filter_property";
const filterProperties = alias(sessionProperties, FILTER_PROPERTY);
const FILTER_SESSION = "filter_session";
const filterSessions = alias(sessions, FILTER_SESSION);

/** Event fields that `session_pages` holds every value of, per session. */
const PAGE_KEYS = { path: "path", origin: "origin" } as const;
type PageField = keyof typeof PAGE_KEYS;

const isPageField = (column: FilterColumn): column is PageField => column in PAGE_KEYS;

/** What a filter compares: a text expression, or a number (duration, revenue). */
interface Operand {
  expression: SQL | PgColumn;
  numeric: boolean;
}

const isColumn = (expression: SQL | PgColumn): expression is PgColumn => !(expression instanceof SQL);

function eventOperand(field: FilterField, table: EventsTable): Operand {
  if (field.kind === "property") {
    // The key path is one bound text[] parameter: keys never become SQL text.
    return { expression: sql`(${table.properties} #>> ${sql.param(field.path)}::text[])`, numeric: false };
  }
  return { expression: eventColumn(field.column, table), numeric: field.numeric };
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (match) => `\\${match}`);

const anyOf = (parts: SQL[]) => sql`(${sql.join(parts, sql` or `)})`;

/**
 * `predicate`, false where it is NULL. On a column it is written `column is not null and
 * predicate`, so the planner still sees the predicate itself (an index condition for `in (…)`);
 * an expression (a property lookup) is not repeated and gets `coalesce(predicate, false)`.
 */
function nullAsFalse(operand: SQL | PgColumn, predicate: SQL): SQL {
  return isColumn(operand)
    ? sql`(${operand} is not null and ${predicate})`
    : sql`coalesce(${predicate}, false)`;
}

/** `value::numeric` as a bound text parameter: the parser admits only numbers and numeric text. */
const numericParam = (value: string | number) => sql`${String(value)}::numeric`;

function likeAny(text: SQL | PgColumn, patterns: string[]): SQL {
  return anyOf(patterns.map((pattern) => sql`${text} like ${pattern} escape '\\'`));
}

function compare(operator: "gt" | "gte" | "lt" | "lte", left: SQL, right: SQL): SQL {
  switch (operator) {
    case "gt":
      return sql`${left} > ${right}`;
    case "gte":
      return sql`${left} >= ${right}`;
    case "lt":
      return sql`${left} < ${right}`;
    case "lte":
      return sql`${left} <= ${right}`;
  }
}

/**
 * One filter as a boolean that is never NULL (so it composes under NOT and OR), with the
 * contract's semantics: any value matches for the positive operators; `isNot` and `doesNotContain`
 * match none of the values and also a missing one.
 */
function condition(filter: Filter, { expression, numeric }: Operand): SQL {
  const value = sql`${expression}`;
  // Text operators on numbers look at their decimal text.
  const text = numeric ? sql`(${expression})::text` : value;
  const texts = filter.values.map(String);
  // Numbers compare as numbers on numeric columns, everything else as case-sensitive text.
  const list = () =>
    sql.join(numeric ? filter.values.map(numericParam) : texts.map((t) => sql`${t}`), sql`, `);
  const like = (pattern: (escaped: string) => string) =>
    likeAny(
      text,
      texts.map((t) => pattern(escapeLike(t))),
    );
  switch (filter.operator) {
    case "is":
      return nullAsFalse(expression, sql`${value} in (${list()})`);
    case "isNot":
      return sql`(${value} is null or ${value} not in (${list()}))`;
    case "contains":
      return nullAsFalse(
        expression,
        like((t) => `%${t}%`),
      );
    case "doesNotContain":
      // NOT (a OR b): contains none of them. (OpenPanel ORed the negations, which is always true.)
      return sql`(${text} is null or not ${like((t) => `%${t}%`)})`;
    case "startsWith":
      return nullAsFalse(
        expression,
        like((t) => `${t}%`),
      );
    case "endsWith":
      return nullAsFalse(
        expression,
        like((t) => `%${t}`),
      );
    case "regex":
      return nullAsFalse(expression, anyOf(texts.map((pattern) => sql`${text} ~ ${pattern}`)));
    case "isNull":
      return numeric ? sql`(${value} is null)` : sql`(${value} is null or ${value} = '')`;
    case "isNotNull":
      return numeric ? sql`(${value} is not null)` : sql`(${value} is not null and ${value} <> '')`;
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const first = filter.values[0];
      if (first === undefined) return sql`false`;
      if (numeric) return nullAsFalse(expression, compare(filter.operator, value, numericParam(first)));
      // Non-numeric text is simply not matched; the CASE keeps the cast from ever seeing it.
      return sql`(case when ${value} ~ ${NUMERIC_TEXT_SQL} then ${compare(
        filter.operator,
        sql`(${value})::numeric`,
        numericParam(first),
      )} else false end)`;
    }
  }
}

/**
 * One filter over a dimension's value as the rollups store it (`name`: empty strings and NULL both
 * NULL, "not set"). It matches what the filter matches on the sessions, except where a session's
 * value is "" rather than NULL; `dimensionFilter` (insights/model.ts) keeps those filters off the
 * rollups (a value that is "", a `regex` not known to miss the empty text). Pass
 * the column itself where there is one: `is` then stays an index condition (`name in (…)`).
 */
export function dimensionValueCondition(filter: Filter, value: SQL | PgColumn): SQL {
  return condition(filter, { expression: value, numeric: false });
}

/**
 * The AND of all filters over event rows of `table` (default `events`). Session-attribute fields
 * use the event's own columns. Undefined when there are no filters.
 */
export function eventConditions(filters: Filter[], table: EventsTable = events): SQL | undefined {
  return and(...filters.map((filter) => condition(filter, eventOperand(filter.field, table))));
}

/**
 * A row that names one session: the `sessions` row itself, or one of its session pages. Both carry
 * the session's start (the refresh writes a session's row, pages and names together).
 */
export interface SessionReference {
  projectId: AnyPgColumn;
  sessionId: AnyPgColumn;
  startedAt: AnyPgColumn;
}

/** The session a `session_pages` row names: filters on sessions tested from its page rows. */
export const SESSION_OF_PAGE_ROW: SessionReference = {
  projectId: sessionPages.projectId,
  sessionId: sessionPages.sessionId,
  startedAt: sessionPages.startedAt,
};

export interface SessionFilterOptions {
  /**
   * The window the sessions started in. It bounds the events, pages and sessions searched: no
   * event of a session precedes its start, and its pages and its row carry that start, so the
   * bound changes no answer, and it lets the search use the (project, time) indexes instead of
   * reading the whole project.
   */
  window?: { start: Date; end: Date };
  /** The session each filter is evaluated for; the unaliased `sessions` row by default. */
  of?: SessionReference;
}

/**
 * Some event of the session a property row names (`filter_property`) that passes the filter on its
 * JSON: for a NULL row (its path holds an object, an array or a long text there), or for a row that
 * may make the session fail a negative operator. No event precedes its session's start, which the
 * row carries. `offset 0` keeps it a probe of that session's events per row: as a join the planner
 * hashed every event of the project whose value it guessed rare (a property's `is null`).
 */
function eventsOfPropertyRow(filter: Filter, field: FilterField): SQL {
  return sql`exists (select 1 from ${events} as ${sql.identifier(FILTER_EVENT)} where ${and(
    eq(filterEvents.projectId, filterProperties.projectId),
    eq(filterEvents.sessionId, filterProperties.sessionId),
    gte(filterEvents.createdAt, filterProperties.startedAt),
    condition(filter, eventOperand(field, filterEvents)),
  )} offset 0)`;
}

/**
 * The AND of all filters for a query over sessions. Session-attribute fields compare the
 * session's columns (its first event's attributes). Each event-field filter (`name`, `path`,
 * `origin`, `duration`, `revenue`, `properties.*`) is its own EXISTS over the session's events:
 * the contract keeps "the sessions that have at least one matching event", so two event filters
 * may be satisfied by different events of the session, and `isNot`/`doesNotContain` keep sessions
 * with some event that does not match (not sessions without any matching event). The session's
 * events count whatever the query's time window. `path` and `origin` are looked up in the
 * session's pages, which hold every value its events carry (NULL included), and `name` in its
 * names (`session_names`, every event name it holds), and a property filter in its property values
 * (`session_properties`, src/queries/property-leaves.ts says when): the same sessions, found by index.
 */
export function sessionConditions(filters: Filter[], options: SessionFilterOptions = {}): SQL | undefined {
  const { window } = options;
  const session = options.of ?? {
    projectId: sessions.projectId,
    sessionId: sessions.id,
    startedAt: sessions.startedAt,
  };
  const onSessionRow = options.of === undefined;
  /** The window bound on a session's start, as carried by its row or its pages. */
  const startedInWindow = (startedAt: AnyPgColumn) =>
    window ? [gte(startedAt, window.start), lt(startedAt, window.end)] : [];
  /**
   * Some row of `table` (aliased `name`) that belongs to the session and passes `matches`. Rows
   * that carry the session's start (its row, pages and names) also match it, which changes no
   * answer. A nested loop (the plan for a window the planner expects to be small, as for a
   * project its statistics predate) then probes (project, start) per outer row; matched by the
   * session alone, pages and names have no index to probe, and it read the whole window again
   * for every outer row, a cost that grows with the square of the window's sessions.
   */
  const someRowOf = (
    table:
      | typeof sessions
      | typeof sessionPages
      | typeof sessionNames
      | typeof sessionProperties
      | typeof events,
    name: string,
    keys: { projectId: AnyPgColumn; sessionId: AnyPgColumn; startedAt?: AnyPgColumn },
    ...matches: Array<SQL | undefined>
  ) =>
    // An aliased table renders as its alias alone, so the FROM item is spelled out.
    sql`exists (select 1 from ${table} as ${sql.identifier(name)} where ${and(
      eq(keys.projectId, session.projectId),
      eq(keys.sessionId, session.sessionId),
      keys.startedAt ? eq(keys.startedAt, session.startedAt) : undefined,
      ...matches,
    )})`;
  const onSession = (filter: Filter) => filter.field.kind === "column" && filter.field.scope === "session";
  /** The session-attribute filters as tests of a sessions row (`sessions` itself by default). */
  const sessionTests = (table?: typeof filterSessions) =>
    filters.flatMap((filter) =>
      filter.field.kind === "column" && filter.field.scope === "session"
        ? [condition(filter, { expression: sessionColumn(filter.field.column, table), numeric: false })]
        : [],
    );
  // Every session-attribute filter tests the same row: one lookup of it for all of them, rather
  // than one per filter (three filters on /pages read the window's sessions once, not three times).
  const sessionLookup = (tests: SQL[]) =>
    tests.length === 0
      ? []
      : [
          someRowOf(
            sessions,
            FILTER_SESSION,
            {
              projectId: filterSessions.projectId,
              sessionId: filterSessions.id,
              startedAt: filterSessions.startedAt,
            },
            ...startedInWindow(filterSessions.startedAt),
            ...tests,
          ),
        ];
  const sessionRow = onSessionRow ? sessionTests() : sessionLookup(sessionTests(filterSessions));
  return and(
    ...sessionRow,
    ...filters
      .filter((filter) => !onSession(filter))
      .map((filter) => {
        const { field } = filter;
        if (field.kind === "column" && isPageField(field.column)) {
          return someRowOf(
            sessionPages,
            FILTER_PAGE,
            filterPages,
            ...startedInWindow(filterPages.startedAt),
            condition(filter, { expression: filterPages[PAGE_KEYS[field.column]], numeric: false }),
          );
        }
        if (field.kind === "column" && field.column === "name") {
          return someRowOf(
            sessionNames,
            FILTER_NAME,
            filterNames,
            ...startedInWindow(filterNames.startedAt),
            condition(filter, { expression: filterNames.name, numeric: false }),
          );
        }
        const byProperties =
          field.kind === "property"
            ? propertyAnswer(filter.operator, field.path, filter.values.map(String))
            : "events";
        if (field.kind === "property" && byProperties !== "events") {
          // The session's property values, by index, rather than every event's JSON of the window.
          const ofKey = [
            ...startedInWindow(filterProperties.startedAt),
            sql`${filterProperties.path} = ${sql.param(field.path)}::text[]`,
          ];
          const counterpart = POSITIVE_COUNTERPART[filter.operator];
          if (byProperties === "complement" && counterpart !== undefined) {
            // Left out: the sessions with a row (a value passing the counterpart, or a mark) none of
            // whose events passes the filter. An anti-join, whose events are those rows' sessions'.
            const passes = condition(
              { ...filter, operator: counterpart },
              { expression: filterProperties.value, numeric: false },
            );
            return sql`not ${someRowOf(
              sessionProperties,
              FILTER_PROPERTY,
              filterProperties,
              ...ofKey,
              sql`(${passes} or ${filterProperties.value} is null)`,
              sql`not ${eventsOfPropertyRow(filter, field)}`,
            )}`;
          }
          const held = condition(filter, { expression: filterProperties.value, numeric: false });
          return someRowOf(
            sessionProperties,
            FILTER_PROPERTY,
            filterProperties,
            ...ofKey,
            byProperties === "values"
              ? held
              : sql`(${held} or (${filterProperties.value} is null and ${eventsOfPropertyRow(filter, field)}))`,
          );
        }
        return someRowOf(
          events,
          FILTER_EVENT,
          filterEvents,
          window ? gte(filterEvents.createdAt, window.start) : undefined,
          condition(filter, eventOperand(field, filterEvents)),
        );
      }),
  );
}

const INVALID_REGEX = "2201B";

/**
 * Checks every `regex` pattern with Postgres itself (POSIX semantics, not JavaScript's): one query
 * for all of them, and, only when that fails, one per pattern to name the culprit. An invalid
 * pattern is a 400 at `<pathPrefix>/<index>/value`. The same query tells whether a pattern matches
 * the empty text, the one case the rollups (which store "" as not set) cannot answer: it resolves
 * to that (false without regex filters).
 */
export async function assertValidRegexes(
  db: Database,
  filters: Filter[],
  pathPrefix = "filters",
): Promise<boolean> {
  const patterns = filters.flatMap((filter) =>
    filter.operator === "regex" ? filter.values.map((value) => ({ filter, pattern: String(value) })) : [],
  );
  if (patterns.length === 0) return false;
  // One text[] parameter: up to 2000 patterns would exceed Postgres' 1664 select-list entries.
  const list = sql`${sql.param(patterns.map(({ pattern }) => pattern))}::text[]`;
  const all = sql`select count(*)::int as matches from unnest(${list}) as p(pattern) where '' ~ p.pattern`;
  try {
    const result = await db.execute<{ matches: number }>(all);
    return Number(result.rows[0]?.matches ?? 0) > 0;
  } catch (error) {
    if (postgresError(error)?.code !== INVALID_REGEX) throw error;
  }
  for (const { filter, pattern } of patterns) {
    try {
      await db.execute(sql`select '' ~ ${pattern}`);
    } catch (error) {
      const failure = postgresError(error);
      if (failure?.code !== INVALID_REGEX) throw error;
      const reason = failure.message.replace(/^invalid regular expression:\s*/, "");
      throw ApiError.invalid(
        `${pathPrefix}/${filter.index}/value`,
        `invalid regular expression ${JSON.stringify(pattern)}: ${reason || "rejected by Postgres"}`,
      );
    }
  }
  // Each pattern passed alone after all of them failed together: not known, so not the rollups.
  return true;
}
