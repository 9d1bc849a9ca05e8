import { BREAKDOWN_DIMENSIONS } from "../../src/lib/dimensions";
import { FILTER_OPERATORS } from "../../src/lib/filter-parser";
import { RANGE_PRESETS } from "../../src/lib/range";
import { CHART_SEGMENTS } from "../../src/queries/charts/model";
import { Rng } from "../seed/random";

/**
 * Seeded hostile requests over every route, parameter, header and method, shared by the test
 * suite (a few thousand in workerd, test/http/fuzz.test.ts) and `npm run fuzz` (100,000 against a
 * running server). The same seed gives the same requests. Values mix the plausible (so requests
 * reach the database) with the hostile: control characters, NUL, lone surrogates, SQL, huge and
 * negative numbers, malformed and deeply nested JSON, out-of-range dates, broken regexes.
 */

export interface FuzzRequest {
  method: string;
  /** Path and query, URL-encoded. */
  path: string;
  headers: Record<string, string>;
}

export interface FuzzTarget {
  projectId: string;
  /** Credentials of a read client of `projectId`. */
  client: { id: string; secret: string };
}

/** Mostly reads, so most requests get past the method check. */
function method(rng: Rng): string {
  if (rng.chance(0.85)) return "GET";
  return rng.pick(["HEAD", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]);
}

const HOSTILE_TEXT = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "'; drop table events; --",
  '" or 1=1 --',
  "$1",
  "%",
  "%00",
  "%zz",
  "_",
  "\\",
  "\\\\'",
  "😀",
  "\u202e",
  "\r\n",
  "\t",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e21",
  "-1",
  "0",
  "9007199254740993",
  "99999999999999999999999999",
  "0x10",
  "1.5",
  "true",
  "[]",
  "{}",
  "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "=cmd|' /C calc'!A0",
  "(",
  "[",
  "*",
  "(a+)+$",
  "a{1000000}",
  "\\1",
  "(?<n>a)",
];

const PLAUSIBLE_TEXT = [
  "/",
  "/pricing",
  "/docs/start",
  "screen_view",
  "NO",
  "US",
  "Chrome",
  "desktop",
  "google",
  "Oslo",
];
const DATES = [
  "2026-11-01",
  "2026-11-20 10:00:00",
  "2026-11-20T10:00:00Z",
  "2026-11-20T10:00:00+05:30",
  "2026-02-30",
  "2026-13-01",
  "0001-01-01",
  "0000-01-01",
  "9999-12-31",
  "10000-01-01",
  "-0001-01-01",
  "2026-11-20T25:00:00",
  "2026-11-20T10:00:00+24:00",
  "yesterday",
  "1763719062123",
];
const ZONES = [
  "UTC",
  "Europe/Oslo",
  "Asia/Tokyo",
  "Asia/Kolkata",
  "America/Santiago",
  "Mars/Base",
  "utc",
  "+05:00",
  "",
];
const RANGES = [...RANGE_PRESETS.filter((preset) => preset !== "custom"), "custom", "all", "1d"];
const INTERVALS = ["minute", "hour", "day", "week", "month", "year", ""];
const OPERATORS = [...FILTER_OPERATORS, "like", ""];
const FIELDS = [
  ...BREAKDOWN_DIMENSIONS,
  "path",
  "origin",
  "name",
  "referrer",
  "duration",
  "revenue",
  "properties.plan",
  "properties.a.b.c",
  "properties.",
  "properties",
  "profile.email",
  "colour",
  "",
];
const SEGMENTS = [...CHART_SEGMENTS, "visitors", ""];

function text(rng: Rng): string {
  if (rng.chance(0.5)) return rng.pick(PLAUSIBLE_TEXT);
  if (rng.chance(0.1)) return "x".repeat(rng.pick([100, 1_000, 5_000, 9_000, 20_000]));
  return rng.pick(HOSTILE_TEXT);
}

function scalar(rng: Rng): unknown {
  switch (rng.int(8)) {
    case 0:
      return rng.int(2_000_000) - 1_000_000;
    case 1:
      return rng.pick([1e21, -0, 0.5, Number.MAX_SAFE_INTEGER, 2 ** 63]);
    case 2:
      return null;
    case 3:
      return rng.chance(0.5);
    case 4:
      return [text(rng)];
    case 5:
      return { value: text(rng) };
    default:
      return text(rng);
  }
}

function filter(rng: Rng): unknown {
  if (rng.chance(0.1)) return scalar(rng);
  const values = Array.from({ length: rng.pick([0, 1, 1, 2, 3, 101]) }, () =>
    rng.chance(0.8) ? text(rng) : scalar(rng),
  );
  const item: Record<string, unknown> = {
    name: rng.chance(0.9) ? rng.pick(FIELDS) : scalar(rng),
    operator: rng.chance(0.9) ? rng.pick(OPERATORS) : scalar(rng),
  };
  if (rng.chance(0.9)) item.value = rng.chance(0.85) ? values : scalar(rng);
  return item;
}

function json(rng: Rng, make: () => unknown, max: number): string {
  switch (rng.int(10)) {
    case 0:
      return text(rng);
    case 1:
      return "[".repeat(rng.pick([10, 1_000, 5_000]));
    case 2:
      return JSON.stringify(make());
    default:
      return JSON.stringify(Array.from({ length: rng.int(max + 1) }, make));
  }
}

function seriesItem(rng: Rng): unknown {
  if (rng.chance(0.1)) return scalar(rng);
  const item: Record<string, unknown> = {
    name: rng.chance(0.8) ? rng.pick(["*", "screen_view", "purchase"]) : text(rng),
  };
  if (rng.chance(0.3)) item.segment = rng.pick(SEGMENTS);
  if (rng.chance(0.2)) item.property = rng.pick(["duration", "revenue", "properties.amount", text(rng)]);
  if (rng.chance(0.3)) item.filters = Array.from({ length: rng.int(3) }, () => filter(rng));
  return item;
}

/** A parameter: a value the API accepts, and a hostile one. */
type Param = [name: string, valid: (rng: Rng) => string, hostile: (rng: Rng) => string];

/** Base64 of the UTF-8 bytes of any text (`btoa` takes Latin-1 only). */
function base64(value: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const HOSTILE_NUMBER = (rng: Rng) =>
  rng.pick(["0", "-1", "1e3", "1.5", "abc", "", "99999999999", "1e21", "0x10", "٣", text(rng)]);
const VALID_LIMIT = (rng: Rng) => String(1 + rng.int(rng.chance(0.8) ? 50 : 1_000));
const VALID_DATE = (rng: Rng) =>
  rng.pick(["2026-11-01", "2026-10-01", "2026-11-20 10:00:00", "2026-11-20T10:00:00Z", "2026-11-24"]);
const HOSTILE_DATE = (rng: Rng) => (rng.chance(0.8) ? rng.pick(DATES) : text(rng));
const VALID_FIELDS = [
  "country",
  "path",
  "browser",
  "name",
  "referrer_name",
  "properties.plan",
  "duration",
  "revenue",
];

function validFilters(rng: Rng): string {
  return JSON.stringify(
    Array.from({ length: rng.int(4) }, () => ({
      name: rng.pick(VALID_FIELDS),
      operator: rng.pick(FILTER_OPERATORS),
      value: Array.from({ length: 1 + rng.int(3) }, () => rng.pick(PLAUSIBLE_TEXT)),
    })),
  );
}

const WINDOW_PARAMS: Param[] = [
  [
    "range",
    (rng) => rng.pick(RANGES.slice(0, RANGE_PRESETS.length - 1)),
    (rng) => (rng.chance(0.5) ? rng.pick(RANGES) : text(rng)),
  ],
  ["startDate", VALID_DATE, HOSTILE_DATE],
  ["endDate", VALID_DATE, HOSTILE_DATE],
  [
    "timezone",
    (rng) => rng.pick(ZONES.slice(0, 5)),
    (rng) => (rng.chance(0.5) ? rng.pick(ZONES) : text(rng)),
  ],
  [
    "interval",
    (rng) => rng.pick(["hour", "day", "week", "month"]),
    (rng) => rng.pick([...INTERVALS, text(rng)]),
  ],
  ["previous", (rng) => rng.pick(["true", "false"]), (rng) => rng.pick(["1", "yes", "", text(rng)])],
  ["filters", validFilters, (rng) => json(rng, () => filter(rng), 4)],
];

const LIST_PARAMS: Param[] = [
  ["limit", VALID_LIMIT, HOSTILE_NUMBER],
  [
    "cursor",
    (rng) => base64(JSON.stringify({ o: rng.int(100), q: rng.hex(8) })).replace(/=+$/, ""),
    (rng) => (rng.chance(0.5) ? base64(JSON.stringify({ o: scalar(rng), q: text(rng) })) : text(rng)),
  ],
  ["minutes", (rng) => String(1 + rng.int(60)), HOSTILE_NUMBER],
];

const TRAFFIC_PARAMS: Param[] = [
  ["eventNames", (rng) => rng.pick(["screen_view", '["purchase","signup"]']), text],
  ["country", (rng) => rng.pick(["NO", "US"]), text],
  ["sortBy", (rng) => rng.pick(["sessions", "avg_duration"]), text],
  ["propertyKey", (rng) => rng.pick(["country", "plan", "properties.plan"]), text],
  ["eventName", (rng) => rng.pick(["screen_view", "purchase"]), text],
  ["q", (rng) => rng.pick(["a", "%", "_"]), text],
  ["mode", (rng) => rng.pick(["entry", "exit", "after", "before", "between"]), text],
  ["search", (rng) => rng.pick(["/", "%", "shop"]), text],
  ["properties", () => '{"plan":"pro"}', (rng) => json(rng, () => scalar(rng), 3)],
  ["name", (rng) => rng.pick(["user", "a b", "% _"]), text],
  ["identified", (rng) => rng.pick(["true", "false"]), text],
  ["inactiveDays", (rng) => String(1 + rng.int(400)), HOSTILE_NUMBER],
  ["minSessions", (rng) => String(1 + rng.int(5)), HOSTILE_NUMBER],
  ["performedEvent", (rng) => rng.pick(["purchase", "signup"]), text],
  ["sortOrder", (rng) => rng.pick(["asc", "desc"]), text],
  ["eventLimit", (rng) => String(1 + rng.int(100)), HOSTILE_NUMBER],
  ["steps", (rng) => rng.pick(['["screen_view","purchase"]', "signup"]), text],
  ["windowHours", (rng) => String(1 + rng.int(720)), HOSTILE_NUMBER],
  ["groupBy", (rng) => rng.pick(["session_id", "profile_id"]), text],
  ["days", (rng) => String(1 + rng.int(90)), HOSTILE_NUMBER],
  ["criteria", (rng) => rng.pick(["on", "on_or_after"]), text],
  ["startEvent", (rng) => rng.pick(["screen_view", "/pricing"]), text],
  ["endEvent", (rng) => rng.pick(["purchase", "/cart"]), text],
  ["include", (rng) => rng.pick(["signup", '["purchase","/"]']), text],
  ["exclude", (rng) => rng.pick(["button_click", '["signup"]']), text],
  ["paths", (rng) => rng.pick(["true", "false"]), text],
  ["maxLabels", (rng) => String(1 + rng.int(50)), HOSTILE_NUMBER],
  [
    "breakdown",
    (rng) => rng.pick(["country", "city", "referrer_name", "utm_source", "browser", "os_version"]),
    (rng) => rng.pick([...BREAKDOWN_DIMENSIONS, text(rng)]),
  ],
];

const EXPORT_PARAMS: Param[] = [
  ["event", (rng) => rng.pick(["screen_view", "purchase"]), text],
  ["profileId", (rng) => rng.pick(["d-s1", "user-1"]), text],
  ["start", VALID_DATE, HOSTILE_DATE],
  ["end", VALID_DATE, HOSTILE_DATE],
  [
    "includes",
    (rng) => rng.pick(["profile", "meta,geo", "properties,device,referrer"]),
    (rng) => rng.pick(["bogus", ",,", text(rng)]),
  ],
  ["page", (rng) => String(1 + rng.int(5)), HOSTILE_NUMBER],
  ["after", (rng) => rng.uuid(), text],
  ["totalCount", (rng) => rng.pick(["true", "false"]), (rng) => rng.pick(["x", "1", text(rng)])],
  ["format", (rng) => rng.pick(["json", "ndjson", "csv"]), (rng) => rng.pick(["xml", "", text(rng)])],
  ["timezone", (rng) => rng.pick(ZONES.slice(0, 5)), (rng) => rng.pick(ZONES.slice(5))],
  ["filters", validFilters, (rng) => json(rng, () => filter(rng), 4)],
  ["limit", VALID_LIMIT, HOSTILE_NUMBER],
  ["cursor", (rng) => base64(`v1:${Date.UTC(2026, 10, 1)}:${rng.uuid()}`).replace(/=+$/, ""), text],
];

const CHART_PARAMS: Param[] = [
  ...WINDOW_PARAMS,
  [
    "series",
    (rng) => JSON.stringify([{ name: rng.pick(["*", "screen_view", "purchase"]) }]),
    (rng) => json(rng, () => seriesItem(rng), 11),
  ],
  ["events", () => JSON.stringify([{ name: "*" }]), (rng) => json(rng, () => seriesItem(rng), 3)],
  [
    "breakdowns",
    (rng) => JSON.stringify([{ name: rng.pick(VALID_FIELDS) }]),
    (rng) => json(rng, () => ({ name: rng.chance(0.8) ? rng.pick(FIELDS) : scalar(rng) }), 4),
  ],
  ["segment", (rng) => rng.pick(CHART_SEGMENTS), (rng) => rng.pick(["visitors", "", text(rng)])],
  ["property", (rng) => rng.pick(["duration", "revenue", "properties.amount"]), text],
  ["limit", VALID_LIMIT, HOSTILE_NUMBER],
];

/**
 * Some of `params`, each valid or (one in four) hostile: a request with one bad value among good
 * ones reaches as deep as that value goes, where all-hostile requests stop at the first check.
 */
function query(rng: Rng, params: readonly Param[]): string {
  const search = new URLSearchParams();
  for (const [name, valid, hostile] of params) {
    if (rng.chance(0.4)) search.append(name, rng.chance(0.25) ? hostile(rng) : valid(rng));
    // Now and then a parameter twice, or a name nobody knows.
    if (rng.chance(0.02)) search.append(name, hostile(rng));
  }
  // A window needs both bounds: most requests with one get the other (a valid one).
  const bounds: Array<[string, string, string]> = [
    ["startDate", "endDate", "2026-11-24"],
    ["endDate", "startDate", "2026-10-01"],
  ];
  for (const [bound, partner, value] of bounds) {
    if (search.has(bound) && !search.has(partner) && rng.chance(0.9)) search.append(partner, value);
  }
  if (rng.chance(0.05)) search.append(text(rng) || "x", text(rng));
  const encoded = search.toString();
  // A raw % sequence the URL parser keeps as it is.
  return rng.chance(0.03) ? `${encoded}&bad=%E0%A4%A` : encoded;
}

/** A path segment; text with a lone surrogate becomes the invalid UTF-8 of one (`%ED%A0%80`). */
function segmentOf(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return "%ED%A0%80";
  }
}

function route(rng: Rng, target: FuzzTarget): string {
  const project = rng.chance(0.9) ? target.projectId : rng.pick([text(rng), "demo", rng.uuid()]);
  const segment = segmentOf(project);
  switch (rng.int(12)) {
    case 0:
      return `/insights/${segment}/metrics?${query(rng, WINDOW_PARAMS)}`;
    case 1:
      return `/insights/${segment}/live?${query(rng, LIST_PARAMS)}`;
    case 2:
      return `/insights/${segment}/pages?${query(rng, [...WINDOW_PARAMS, ...LIST_PARAMS])}`;
    case 3:
    case 4: {
      const dimension = rng.chance(0.9) ? rng.pick(BREAKDOWN_DIMENSIONS) : segmentOf(text(rng));
      return `/insights/${segment}/${dimension}?${query(rng, [...WINDOW_PARAMS, ...LIST_PARAMS])}`;
    }
    case 5:
    case 6:
      return `/export/events?${rng.chance(0.9) ? `projectId=${segment}&` : ""}${query(rng, EXPORT_PARAMS)}`;
    case 7:
    case 8:
      return `/export/charts?${rng.chance(0.9) ? `projectId=${segment}&` : ""}${query(rng, CHART_PARAMS)}`;
    case 9:
      return rng.pick(["/health", "/openapi.json", "/docs", "/", "/insights", "/export"]);
    case 10: {
      if (rng.chance(0.3)) return `/${segmentOf(text(rng))}/${segmentOf(text(rng))}`;
      // OpenPanel's newer names: the overview, the traffic groups, groups and saved reports.
      const alias = rng.pick([
        "overview",
        "pages/top",
        "pages/performance",
        "pages/entry_exit",
        "events",
        "sessions",
        "profiles",
        `profiles/${rng.pick(["user-1", "d-s1", "12345", segmentOf(text(rng))])}`,
        "profiles/user-1/sessions",
        "profiles/user-1/metrics",
        "funnel",
        "engagement",
        "active_users",
        "retention",
        "retention/cohort",
        "user_flow",
        "events/names",
        "events/properties",
        "events/property_values",
        "traffic/referrers",
        "traffic/geo",
        "traffic/devices",
        "groups",
        "reports/r1/data",
      ]);
      return `/insights/${segment}/${alias}?${query(rng, [...WINDOW_PARAMS, ...LIST_PARAMS, ...TRAFFIC_PARAMS])}`;
    }
    default: {
      const tail = rng.pick(["%00", "%2F..", ";x", "/extra", ""]);
      return `/insights/${segment}/${rng.pick(["metrics", "pages", "country"])}${tail}?${query(rng, WINDOW_PARAMS)}`;
    }
  }
}

function headers(rng: Rng, target: FuzzTarget): Record<string, string> {
  const result: Record<string, string> = {};
  // Mostly the valid client's credentials, so most requests get past authentication.
  const roll = rng.float();
  if (roll < 0.03) {
    // No credentials at all.
  } else if (roll < 0.06) {
    result.Authorization = `Basic ${base64(`${target.client.id}:${target.client.secret}`)}`;
  } else if (roll < 0.1) {
    result.Authorization = rng.pick([
      "Basic",
      "Basic !!!",
      `Basic ${base64("no-colon")}`,
      "Bearer x",
      `Basic ${base64(`${rng.uuid()}:x`)}`,
    ]);
  } else if (roll < 0.14) {
    result["openpanel-client-id"] = rng.chance(0.5) ? target.client.id : rng.uuid();
    result["openpanel-client-secret"] = rng.chance(0.5) ? "wrong" : text(rng).replace(/[^\x20-\x7e]/g, "");
  } else {
    result["openpanel-client-id"] = target.client.id;
    result["openpanel-client-secret"] = target.client.secret;
  }
  if (rng.chance(0.2))
    result.Accept = rng.pick([
      "text/csv",
      "application/x-ndjson",
      "*/*",
      "text/html",
      "application/json;q=0",
    ]);
  if (rng.chance(0.3)) result["Cache-Control"] = rng.pick(["no-cache", "no-store", "max-age=0"]);
  if (rng.chance(0.05)) result["If-None-Match"] = rng.pick(['"abc"', "*", 'W/"x"']);
  if (rng.chance(0.05)) result.Origin = rng.pick(["https://app.example", "null"]);
  if (rng.chance(0.05)) result["Access-Control-Request-Method"] = "GET";
  if (rng.chance(0.05)) result["X-Request-Id"] = rng.pick(["trace-1", "x".repeat(500), "bad id with spaces"]);
  return result;
}

/** The `index`-th request of the sequence `seed` names, against `target`. */
export function fuzzRequest(seed: number, index: number, target: FuzzTarget): FuzzRequest {
  const rng = new Rng(seed).reseed(seed, index);
  return { method: method(rng), path: route(rng, target), headers: headers(rng, target) };
}

/** Markers that must never appear in an answer: SQL, stack frames, connection strings. */
export const LEAK_PATTERN =
  /\bselect\b.*\bfrom\b|postgres(ql)?:\/\/|\bat [\w.<>]+ \(|\.ts:\d+|DrizzleQueryError|neondatabase/is;

/**
 * The request size past which the platform answers before the Worker runs (16 KB of request line
 * and headers): its bare 414 or 431 is not the service's to shape.
 */
export const PLATFORM_REQUEST_LIMIT = 16_384;

/** Why an answer is not acceptable, or undefined when it is (2xx/3xx, 4xx problem+json, deliberate 503). */
export function fuzzVerdict(
  status: number,
  contentType: string,
  body: string,
  requestSize = 0,
): string | undefined {
  if ((status === 414 || status === 431) && requestSize > PLATFORM_REQUEST_LIMIT) return undefined;
  if (status >= 500 && status !== 503) return `status ${status}`;
  // Errors only: answers of 2xx carry data and documentation, whose words are not leaks.
  if (status >= 400 && LEAK_PATTERN.test(body)) return "the body leaks SQL, a stack or a connection string";
  if (status >= 400 && body !== "" && !contentType.includes("application/problem+json")) {
    return `a ${status} that is not problem+json (${contentType})`;
  }
  if (status === 503 && !/DATABASE_UNAVAILABLE|QUERY_TIMEOUT/.test(body))
    return "a 503 that is not deliberate";
  return undefined;
}

/** What a request weighs against the platform's limit: its request line and headers. */
export function requestSize(request: FuzzRequest): number {
  const headers = Object.entries(request.headers).reduce(
    (sum, [name, value]) => sum + name.length + value.length + 4,
    0,
  );
  return request.method.length + request.path.length + 11 + headers;
}
