import * as v from "valibot";
import { EVENT_COLUMNS } from "./dimensions";
import { ApiError } from "./errors";
import { jsonQueryParam } from "./validation";

/**
 * The one filter parser of the service (contract section 3): the valibot schemas that validate a
 * `filters` parameter with precise issue paths (`filters/2/operator`), and `normalizeFilters`, which
 * turns the validated objects into `Filter`s for the SQL compiler in `src/queries/filter-conditions.ts`.
 */

export const FILTER_OPERATORS = [
  "is",
  "isNot",
  "contains",
  "doesNotContain",
  "startsWith",
  "endsWith",
  "regex",
  "isNull",
  "isNotNull",
  "gt",
  "gte",
  "lt",
  "lte",
] as const;

export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** Filterable columns, by their wire (snake_case) names: the event name and every event column. */
export const FILTER_COLUMNS = ["name", ...EVENT_COLUMNS] as const;

export type FilterColumn = (typeof FILTER_COLUMNS)[number];

/** Fields of single events; on session-scoped queries they match sessions with a matching event. */
const EVENT_FIELDS = ["name", "path", "origin", "duration", "revenue"] as const;
export type EventField = (typeof EVENT_FIELDS)[number];

/**
 * The fields a session carries, the attributes of its first event. Event fields are not among them,
 * even where `sessions` has a column of that name (its `revenue` is the session's total).
 */
export type SessionAttribute = Exclude<FilterColumn, EventField>;

export type FilterField =
  | { kind: "column"; column: SessionAttribute; scope: "session"; numeric: false }
  | { kind: "column"; column: EventField; scope: "event"; numeric: boolean }
  | { kind: "property"; path: string[]; scope: "event" };

export interface Filter {
  field: FilterField;
  operator: FilterOperator;
  values: Array<string | number>;
  /** Position in the request, for error paths such as `filters/<index>/value`. */
  index: number;
}

const isEventField = (column: FilterColumn): column is EventField =>
  (EVENT_FIELDS as readonly string[]).includes(column);
const COMPARISONS: ReadonlySet<FilterOperator> = new Set(["gt", "gte", "lt", "lte"]);
const VALUELESS: ReadonlySet<FilterOperator> = new Set(["isNull", "isNotNull"]);

/** How a filter, breakdown or discovery key names a property: `properties.<key>`. */
export const PROPERTY_PREFIX = "properties.";

const toCamelCase = (name: string) =>
  name.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());

/** Snake_case and camelCase spellings (`referrer_name`, `referrerName`) of every column. */
const COLUMN_BY_NAME: ReadonlyMap<string, FilterColumn> = new Map(
  FILTER_COLUMNS.flatMap((column) => [
    [column, column],
    [toCamelCase(column), column],
  ]),
);

/**
 * The field a filter (or breakdown) name designates, or undefined when the name is unknown.
 * `properties.a.b` addresses the nested key `b` of `a`; empty segments are invalid.
 */
export function resolveFilterField(name: string): FilterField | undefined {
  const column = COLUMN_BY_NAME.get(name);
  if (column) {
    return isEventField(column)
      ? { kind: "column", column, scope: "event", numeric: column === "duration" || column === "revenue" }
      : { kind: "column", column, scope: "session", numeric: false };
  }
  if (!name.startsWith(PROPERTY_PREFIX)) return undefined;
  const path = name.slice(PROPERTY_PREFIX.length).split(".");
  return path.every((segment) => segment.length > 0) ? { kind: "property", path, scope: "event" } : undefined;
}

// Bounded mantissa and exponent: every text that passes converts to Postgres `numeric` without an
// overflow error. The SQL side guards its casts with the same rule.
const NUMERIC_TEXT = /^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]{1,3})?$/;
const MAX_NUMERIC_TEXT_LENGTH = 100;

/** A finite number, or text such as "10", "-2.5" or "1e3" that reads as one. */
export function isNumericValue(value: string | number): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  return value.length <= MAX_NUMERIC_TEXT_LENGTH && NUMERIC_TEXT.test(value);
}

const NAME_LIST = `${FILTER_COLUMNS.join(", ")} (or their camelCase spellings), or properties.<key>`;

function nameMessage(input: unknown): string {
  if (typeof input === "string" && input.startsWith(PROPERTY_PREFIX)) {
    const name = JSON.stringify(input);
    return `invalid property filter ${name}: use properties.<key> or properties.<key>.<nested>, no empty key`;
  }
  return `unknown filter name ${JSON.stringify(input)}; use one of ${NAME_LIST}`;
}

const FilterName = v.pipe(
  v.string("name must be a string"),
  v.check(
    (name) => resolveFilterField(name) !== undefined,
    (issue) => nameMessage(issue.input),
  ),
);

const FilterOperatorSchema = v.picklist(FILTER_OPERATORS, (issue) =>
  issue.input === undefined
    ? `operator is required; use one of ${FILTER_OPERATORS.join(", ")}`
    : `unknown operator ${JSON.stringify(issue.input)}; use one of ${FILTER_OPERATORS.join(", ")}`,
);

const FilterValue = v.pipe(
  v.array(
    v.union([v.string(), v.pipe(v.number(), v.finite())], "each value must be a string or a finite number"),
    "value must be an array of strings or numbers",
  ),
  v.maxLength(100, "a filter takes at most 100 values"),
);

const isComparison = (operator: FilterOperator) => COMPARISONS.has(operator);

/** One filter object. The cross-field rules run whenever the fields they read are valid. */
export const FilterSchema = v.pipe(
  v.object(
    {
      name: FilterName,
      operator: FilterOperatorSchema,
      // Omitting `value` is only fine for isNull/isNotNull (checked below).
      value: v.optional(FilterValue),
    },
    "each filter must be an object {name, operator, value}",
  ),
  v.forward(
    v.partialCheck(
      [["operator"], ["value"]],
      ({ operator, value }) => VALUELESS.has(operator) || (value ?? []).length > 0,
      (issue) => `operator ${issue.input.operator} needs at least one value`,
    ),
    ["value"],
  ),
  v.forward(
    v.partialCheck(
      [["operator"], ["value"]],
      ({ operator, value }) => {
        const first = value?.[0];
        return !isComparison(operator) || first === undefined || isNumericValue(first);
      },
      (issue) =>
        `operator ${issue.input.operator} compares numbers: ` +
        `its first value must be a number or numeric text like "10"`,
    ),
    ["value"],
  ),
  v.forward(
    v.partialCheck(
      [["name"], ["operator"], ["value"]],
      ({ name, operator, value }) => {
        const field = resolveFilterField(name);
        // Regex patterns are matched against the number's decimal text; comparisons check only
        // their first value (above); every other operator compares numbers on numeric fields.
        if (field?.kind !== "column" || !field.numeric || operator === "regex" || isComparison(operator)) {
          return true;
        }
        return VALUELESS.has(operator) || (value ?? []).every(isNumericValue);
      },
      (issue) => `${issue.input.name} is numeric: its values must be numbers or numeric text like "10"`,
    ),
    ["value"],
  ),
);

export type RawFilter = v.InferOutput<typeof FilterSchema>;

/**
 * A list of filter objects, for filters nested in another JSON parameter (chart series).
 * The length check runs only when every item is valid, so item issues come first.
 */
export const FilterList = v.pipe(
  v.array(FilterSchema, "filters must be a JSON array of {name, operator, value} objects"),
  v.maxLength(20, "at most 20 filters"),
);

const FILTERS_DESCRIPTION = `URL-encoded JSON array of filters, all of which must hold (AND); at most 20.
Each filter is \`{"name": …, "operator": …, "value": [strings or numbers]}\` with at most 100 values,
e.g. \`[{"name":"path","operator":"startsWith","value":["/blog"]}]\`.

Names: ${FILTER_COLUMNS.map((column) => `\`${column}\``).join(", ")}
(camelCase spellings such as \`referrerName\` too), and \`properties.<key>\` (dots address nested keys).
\`duration\` (milliseconds) and \`revenue\` (cents) are numbers: \`is\`, \`isNot\` and the comparisons take
numeric values, and the text operators look at their decimal text.

Operators (case-sensitive; values are literal text):
\`is\` / \`isNot\` equals any value / none of them (\`isNot\` also matches a missing value);
\`contains\` / \`doesNotContain\` contains any value / none of them (the latter also matches a missing
value);
\`startsWith\`, \`endsWith\`: any value; \`regex\`: Postgres POSIX regular expression, any value;
\`isNull\` / \`isNotNull\`: missing or empty / neither (no value needed);
\`gt\` \`gte\` \`lt\` \`lte\`: numeric comparison with the first value (a value that is not numeric does
not match).

On session-scoped endpoints, \`name\`, \`path\`, \`origin\`, \`duration\`, \`revenue\` and
\`properties.*\` keep the sessions with at least one matching event (each filter on its own); other fields
match the session's attributes (its first event's).`;

/**
 * The `filters` query parameter, to sit in a route's query object schema. It is documented as what
 * travels on the wire, a JSON string; the parsing happens in a raw transform (which the JSON Schema
 * converter skips) so that the document does not claim the parameter is an array.
 */
export const FiltersParam = v.optional(
  jsonQueryParam({
    param: "filters",
    schema: FilterList,
    schemaName: "FilterList",
    expected: "a JSON array of {name, operator, value} objects",
    description: FILTERS_DESCRIPTION,
    example: '[{"name":"path","operator":"is","value":["/pricing"]}]',
  }),
  "[]",
);

/** Turns validated filter objects into `Filter`s (a plain function: the schema stays documentable). */
export function normalizeFilters(raw: ReadonlyArray<RawFilter>): Filter[] {
  return raw.map((filter, index) => {
    const field = resolveFilterField(filter.name);
    // Unreachable after validation; kept so a caller that skipped it still gets a 400, not a 500.
    if (!field) throw ApiError.invalid(`filters/${index}/name`, nameMessage(filter.name));
    return {
      field,
      operator: filter.operator,
      values: VALUELESS.has(filter.operator) ? [] : [...(filter.value ?? [])],
      index,
    };
  });
}
