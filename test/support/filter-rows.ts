// The filter tests' data set (nulls, empty strings, LIKE metacharacters, backslashes, quotes,
// unicode, numeric and non-numeric properties, nested properties, later events whose attributes
// differ from their session's first event), the reference that evaluates the contract's wording
// over it in plain TypeScript, and the case tables (test/node/filter-conditions.test.ts).

// ---------------------------------------------------------------------------------------------
// The data set: nulls, empty strings, LIKE metacharacters, backslashes, quotes, unicode, numeric
// and non-numeric properties, nested properties, and later events whose attributes differ from
// their session's first event.
// ---------------------------------------------------------------------------------------------

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

interface Row {
  label: string;
  sessionId: string;
  minute: number;
  name: string;
  path: string | null;
  referrerName: string | null;
  utmSource: string | null;
  country: string | null;
  profileId: string;
  deviceId: string;
  duration: number;
  revenue: number;
  properties: { [key: string]: Json };
}

export const ROWS: Row[] = [
  row("e1", "s1", 0, {
    path: "/blog/100%",
    referrerName: "Google",
    utmSource: "news_letter",
    country: "NO",
    duration: 1500,
    properties: { plan: "pro", cart: { price: 49 }, note: 'say "hi"' },
  }),
  row("e2", "s1", 1, {
    name: "purchase",
    path: null,
    referrerName: "Bing",
    revenue: 4900,
    properties: { cart: { price: "49" } },
  }),
  row("e3", "s1", 2, { path: "/blog/1000", duration: 20_000, properties: { cart: { price: "12abc" } } }),
  row("e4", "s2", 0, { path: "/a_b", duration: 300, country: "SE", properties: { cart: { price: 12.5 } } }),
  row("e5", "s2", 3, { path: "/axb", duration: 10, properties: { cart: { price: null } } }),
  row("e6", "s3", 0, { path: "", referrerName: "", utmSource: "", properties: { cart: {} } }),
  row("e7", "s3", 1, { path: "C:\\dir\\file", properties: { cart: { price: "-3.5" } } }),
  row("e8", "s4", 0, {
    path: "/café",
    referrerName: "Düsseldorf Ärzte",
    country: "DE",
    duration: 7,
    properties: { cart: { price: "1e3" } },
  }),
  row("e9", "s4", 5, { path: "/Café", properties: { cart: { price: " 7" } } }),
  row("e10", "s5", 0, { path: "42", referrerName: "google", properties: { cart: "not an object" } }),
  row("e11", "s5", 2, { name: "signup", path: "1e3", revenue: 150 }),
  row("e12", "s6", 0, {
    path: "/it's",
    referrerName: `O'Reilly "Media"`,
    profileId: "user-1",
    properties: { cart: { price: 0 } },
  }),
  row("e13", "s6", 1, { path: "/blog/7", duration: 100_000, profileId: "user-1" }),
  row("e14", "s7", 0, { path: "/100%", referrerName: "2024", properties: { cart: { price: "10" } } }),
  row("e15", "s7", 1, { path: "/a%b", referrerName: "Bing", properties: { cart: { price: "" } } }),
  row("e16", "s8", 0, {
    path: "/blog/1",
    referrerName: "5",
    country: null,
    properties: { cart: { price: "-" } },
  }),
  // A session with nothing set but its null path, so isNotNull on sessions drops it.
  row("e17", "s9", 0, { name: "custom" }),
];

function row(label: string, sessionId: string, minute: number, fields: Partial<Row>): Row {
  return {
    label,
    sessionId,
    minute,
    name: "screen_view",
    path: null,
    referrerName: null,
    utmSource: null,
    country: null,
    profileId: `d-${sessionId}`,
    deviceId: `d-${sessionId}`,
    duration: 0,
    revenue: 0,
    properties: {},
    ...fields,
  };
}

export const byLabel = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

// ---------------------------------------------------------------------------------------------
// The reference: the contract's wording, evaluated in plain TypeScript over ROWS. It shares no
// code with the compiler (nor with the parser's notion of numbers).
// ---------------------------------------------------------------------------------------------

type Scalar = string | number | null;

/** Row keys of the columns the tests filter on. */
const REFERENCE_COLUMNS: Record<string, keyof Row> = {
  name: "name",
  path: "path",
  referrer_name: "referrerName",
  referrerName: "referrerName",
  utm_source: "utmSource",
  utmSource: "utmSource",
  country: "country",
  profile_id: "profileId",
  profileId: "profileId",
  session_id: "sessionId",
  sessionId: "sessionId",
  duration: "duration",
  revenue: "revenue",
};
const REFERENCE_NUMERIC = new Set(["duration", "revenue"]);
const REFERENCE_EVENT_FIELDS = new Set(["name", "path", "origin", "duration", "revenue"]);

/** The field's value on one event; properties as Postgres prints them (`#>>`). */
function fieldOf(r: Row, name: string): Scalar {
  if (name.startsWith("properties.")) {
    let current: Json | undefined = r.properties;
    for (const key of name.slice("properties.".length).split(".")) {
      if (current === null || typeof current !== "object" || Array.isArray(current)) return null;
      current = current[key];
    }
    if (current === undefined || current === null) return null;
    if (typeof current === "string" || typeof current === "number") return current;
    return JSON.stringify(current);
  }
  const key = REFERENCE_COLUMNS[name];
  if (!key) throw new Error(`reference does not know ${name}`);
  const value = r[key];
  return typeof value === "string" || typeof value === "number" ? value : null;
}

/** Plain decimal or scientific notation, nothing else (no spaces, no hex, no "Infinity"). */
const looksNumeric = (text: string) => /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text);

function holds(
  field: Scalar,
  numericField: boolean,
  operator: string,
  values: Array<string | number>,
): boolean {
  const text = field === null ? null : String(field);
  const equalsOne = (value: string | number) =>
    field !== null && (numericField ? Number(field) === Number(value) : text === String(value));
  const containsOne = (value: string | number) => text?.includes(String(value)) === true;
  switch (operator) {
    case "is":
      return values.some(equalsOne);
    case "isNot":
      return field === null || !values.some(equalsOne);
    case "contains":
      return values.some(containsOne);
    case "doesNotContain":
      return field === null || !values.some(containsOne);
    case "startsWith":
      return values.some((value) => text?.startsWith(String(value)) === true);
    case "endsWith":
      return values.some((value) => text?.endsWith(String(value)) === true);
    case "regex":
      return values.some((value) => text !== null && new RegExp(String(value), "u").test(text));
    case "isNull":
      return field === null || (!numericField && text === "");
    case "isNotNull":
      return field !== null && (numericField || text !== "");
    default: {
      const limit = Number(values[0]);
      if (text === null || !looksNumeric(text)) return false;
      const number = Number(text);
      if (operator === "gt") return number > limit;
      if (operator === "gte") return number >= limit;
      if (operator === "lt") return number < limit;
      if (operator === "lte") return number <= limit;
      throw new Error(`reference does not know ${operator}`);
    }
  }
}

export function expectedEvents(name: string, operator: string, values: Array<string | number>): string[] {
  const numeric = REFERENCE_NUMERIC.has(name);
  return ROWS.filter((r) => holds(fieldOf(r, name), numeric, operator, values))
    .map((r) => r.label)
    .sort(byLabel);
}

/** Sessions keep their first event's attributes; event fields need one matching event. */
export function expectedSessions(name: string, operator: string, values: Array<string | number>): string[] {
  const numeric = REFERENCE_NUMERIC.has(name);
  const bySession = new Map<string, Row[]>();
  for (const r of ROWS) bySession.set(r.sessionId, [...(bySession.get(r.sessionId) ?? []), r]);
  const kept: string[] = [];
  for (const [sessionId, rows] of bySession) {
    const ordered = [...rows].sort((a, b) => a.minute - b.minute);
    const eventField = name.startsWith("properties.") || REFERENCE_EVENT_FIELDS.has(name);
    const matches = eventField
      ? ordered.some((r) => holds(fieldOf(r, name), numeric, operator, values))
      : holds(fieldOf(ordered[0] as Row, name), numeric, operator, values);
    if (matches) kept.push(sessionId);
  }
  return kept.sort(byLabel);
}

// ---------------------------------------------------------------------------------------------
// Every operator × five kinds of field, against the reference.
// ---------------------------------------------------------------------------------------------

export type Cases = Record<string, Array<string | number>>;

export const TEXT_CASES: Cases = {
  is: ["/blog/100%", "/a_b", "nope"],
  isNot: ["/blog/100%", "/a_b"],
  contains: ["%", "\\"],
  doesNotContain: ["_", "blog"],
  startsWith: ["/blog/1", "C:\\"],
  endsWith: ["_b", "é", "%"],
  regex: ["^/blog/[0-9]+$", "é$"],
  isNull: [],
  isNotNull: [],
  gt: ["10"],
  gte: [42],
  lt: ["1000"],
  lte: [42],
};

export const NUMERIC_CASES: Cases = {
  is: [1500, "300"],
  isNot: [0, 1500],
  contains: ["00"],
  doesNotContain: [0, 5],
  startsWith: [1],
  endsWith: ["0"],
  regex: ["^[0-9]{3}$"],
  isNull: [],
  isNotNull: [],
  gt: [300],
  gte: ["300"],
  lt: [10],
  lte: ["1e1"],
};

export const PROPERTY_CASES: Cases = {
  is: [49, "12.5"],
  isNot: [49],
  contains: ["4"],
  doesNotContain: ["4", "1"],
  startsWith: ["-"],
  endsWith: ["5"],
  regex: ["^[0-9]+$"],
  isNull: [],
  isNotNull: [],
  gt: [10],
  gte: ["10"],
  lt: [0],
  lte: ["0"],
};

export const SESSION_ATTRIBUTE_CASES: Cases = {
  is: ["Google", `O'Reilly "Media"`],
  isNot: ["Google"],
  contains: ["oo"],
  doesNotContain: ["oo", "ü"],
  startsWith: ["G"],
  endsWith: ["e", `"`],
  regex: ["^[A-Z]"],
  isNull: [],
  isNotNull: [],
  gt: ["100"],
  gte: [5],
  lt: ["2024"],
  lte: [2024],
};

/** On sessions, isNot keeps sessions with some other path: s2's two paths are both excluded here. */
export const EVENT_ON_SESSION_CASES: Cases = { ...TEXT_CASES, isNot: ["/a_b", "/axb", "/blog/100%"] };

export const OPERATORS = Object.keys(TEXT_CASES);
