import { and, eq, type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, sessionProperties, sessions } from "../../src/db/schema";
import type { FilterOperator } from "../../src/lib/filter-parser";
import { eventConditions, sessionConditions } from "../../src/queries/filter-conditions";
import { type EventInput, insertEvents, uniqueId } from "../support/factories";
import { parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import { drizzleStatements, refreshUntilFolded } from "../support/watermarks";

// A property filter on sessions reads the session properties (the leaves of each session's events'
// properties, and a NULL row where a path holds an object, an array or a long text;
// src/queries/property-leaves.ts) where they answer it, and the events' JSON elsewhere. These events hold every JSON shape `#>>` prints (strings, numbers as written,
// booleans, nested objects, arrays, objects as values), stored as raw jsonb so that 49.0 and a
// 20-digit number keep their text. Each filter keeps exactly the sessions its expectation names.

const database = testDatabase();
afterAll(() => database.close());

const T0 = Date.UTC(2026, 4, 4, 10, 0, 0);
const MINUTE = 60_000;

/** Label → raw jsonb of the properties of its session's one event. */
const PROPERTIES: Record<string, string> = {
  stringPro: '{"plan": "pro", "tier": {"name": "gold"}}',
  stringProCase: '{"plan": "Pro"}',
  number49: '{"price": 49}',
  number49point0: '{"price": 49.0}',
  string49: '{"price": "49"}',
  numberHalf: '{"price": 1.50}',
  boolTrue: '{"flag": true}',
  stringTrue: '{"flag": "true"}',
  bigNumber: '{"big": 12345678901234567890}',
  arrayItem: '{"items": [{"sku": "x1"}, {"sku": "x2"}]}',
  objectValue: '{"tier": {"name": "gold", "rank": 1}}',
  arrayValue: '{"tags": ["a", "b"]}',
  nullValue: '{"plan": null}',
  emptyString: '{"plan": ""}',
  keyedZero: '{"slots": {"0": "first", "01": "second"}}',
  longValue: `{"note": "${"x".repeat(300)}"}`,
  // At the limits of a kept leaf (src/queries/property-leaves.ts), and past them.
  edgeValue: `{"edge": "${"é".repeat(128)}"}`,
  deep16: `${'{"d": '.repeat(15)}{"d": "x"}${"}".repeat(15)}`,
  deep17: `${'{"e": '.repeat(16)}{"e": "x"}${"}".repeat(16)}`,
  topArray: '["first", {"k": "v"}]',
  none: "{}",
  // Sessions of two events (the second in SECOND_EVENT), for the negative operators.
  stageThenNone: '{"stage": "beta"}',
  stageTwice: '{"stage": "beta"}',
  stageObject: '{"stage": {"v": "beta"}}',
  stageLong: `{"stage": "${"b".repeat(300)}"}`,
};

/** Label → raw jsonb of its session's second event, a minute after its first. */
const SECOND_EVENT: Record<string, string> = {
  stageThenNone: "{}",
  stageTwice: '{"stage": "beta"}',
  stageObject: '{"stage": {"v": "beta"}}',
  stageLong: `{"stage": "${"b".repeat(300)}"}`,
};

const ALL = Object.keys(PROPERTIES);
const except = (...labels: string[]) => ALL.filter((label) => !labels.includes(label));

type Source = "values" | "rows" | "complement" | "events";

const path = (key: string, times: number) => Array.from({ length: times }, () => key).join(".");

/**
 * Each filter, the labels of the sessions it keeps, and what answers it (src/queries/property-leaves.ts):
 * the rows holding its values, the path's rows with the events of the sessions a NULL row marks, or
 * the events alone.
 */
const CASES: Array<[string, FilterOperator, Array<string | number>, string[], Source]> = [
  ["properties.plan", "is", ["pro"], ["stringPro"], "values"],
  ["properties.plan", "is", ["pro", "Pro"], ["stringPro", "stringProCase"], "values"],
  ["properties.plan", "is", [""], ["emptyString"], "values"],
  ["properties.plan", "is", ["null"], [], "values"],
  ["properties.price", "is", ["49"], ["number49", "string49"], "values"],
  ["properties.price", "is", [49], ["number49", "string49"], "values"],
  ["properties.price", "is", ["49.0"], ["number49point0"], "values"],
  ["properties.price", "is", ["1.50"], ["numberHalf"], "values"],
  ["properties.price", "is", ["1.5"], [], "values"],
  ["properties.flag", "is", ["true"], ["boolTrue", "stringTrue"], "values"],
  ["properties.big", "is", ["12345678901234567890"], ["bigNumber"], "values"],
  ["properties.tier.name", "is", ["gold"], ["objectValue", "stringPro"], "values"],
  ["properties.items.1.sku", "is", ["x2"], ["arrayItem"], "values"],
  ["properties.slots.0", "is", ["first"], ["keyedZero"], "values"],
  ["properties.0", "is", ["first"], ["topArray"], "values"],
  ["properties.1.k", "is", ["v"], ["topArray"], "values"],
  ["properties.tags.0", "is", ["a"], ["arrayValue"], "values"],
  // Positions the rows write otherwise ("01" is element 1 of an array, or the key "01").
  ["properties.items.01.sku", "is", ["x2"], ["arrayItem"], "events"],
  ["properties.slots.01", "is", ["second"], ["keyedZero"], "events"],
  ["properties.items.-1.sku", "is", ["x2"], ["arrayItem"], "events"],
  // Values printed as objects and arrays, in jsonb's own spacing, and values longer than a row
  // holds: the marked sessions' events.
  ["properties.tier", "is", ['{"name": "gold", "rank": 1}'], ["objectValue"], "rows"],
  ["properties.tags", "is", ['["a", "b"]'], ["arrayValue"], "rows"],
  ["properties.tags", "is", ['["a","b"]'], [], "rows"],
  ["properties.note", "is", ["x".repeat(300)], ["longValue"], "rows"],
  ["properties.note", "is", ["x".repeat(300), "y"], ["longValue"], "rows"],
  ["properties.edge", "is", ["é".repeat(128)], ["edgeValue"], "values"],
  [`properties.${path("d", 16)}`, "is", ["x"], ["deep16"], "values"],
  [`properties.${path("e", 17)}`, "is", ["x"], ["deep17"], "events"],
  // The other positive operators: the path's rows, and the marked sessions' events.
  ["properties.plan", "contains", ["r"], ["stringPro", "stringProCase"], "rows"],
  ["properties.plan", "startsWith", ["P"], ["stringProCase"], "rows"],
  ["properties.plan", "endsWith", ["o", "zz"], ["stringPro", "stringProCase"], "rows"],
  ["properties.plan", "regex", ["^p.o$"], ["stringPro"], "rows"],
  ["properties.plan", "isNotNull", [], ["stringPro", "stringProCase"], "rows"],
  ["properties.plan", "contains", ["%"], [], "rows"],
  ["properties.tier", "contains", ["gold"], ["objectValue", "stringPro"], "rows"],
  ["properties.tier", "isNotNull", [], ["objectValue", "stringPro"], "rows"],
  ["properties.tier", "regex", ['"rank": 1}$'], ["objectValue"], "rows"],
  ["properties.tier.name", "startsWith", ["go"], ["objectValue", "stringPro"], "rows"],
  ["properties.tags", "contains", ["a"], ["arrayValue"], "rows"],
  ["properties.tags", "startsWith", ["["], ["arrayValue"], "rows"],
  ["properties.items", "contains", ["x2"], ["arrayItem"], "rows"],
  ["properties.items.1", "endsWith", ['"x2"}'], ["arrayItem"], "rows"],
  ["properties.items.1.sku", "contains", ["2"], ["arrayItem"], "rows"],
  ["properties.note", "startsWith", ["xxx"], ["longValue"], "rows"],
  ["properties.note", "endsWith", ["x"], ["longValue"], "rows"],
  ["properties.edge", "endsWith", ["é"], ["edgeValue"], "rows"],
  ["properties.price", "gt", [10], ["number49", "number49point0", "string49"], "rows"],
  ["properties.price", "gte", ["49"], ["number49", "number49point0", "string49"], "rows"],
  ["properties.price", "lt", [49], ["numberHalf"], "rows"],
  ["properties.price", "lte", [1.5], ["numberHalf"], "rows"],
  ["properties.big", "gt", ["10000000000000000000"], ["bigNumber"], "rows"],
  ["properties.flag", "regex", ["^t"], ["boolTrue", "stringTrue"], "rows"],
  ["properties.slots.0", "endsWith", ["st"], ["keyedZero"], "rows"],
  ["properties.0", "startsWith", ["fi"], ["topArray"], "rows"],
  ["properties.1", "contains", ["k"], ["topArray"], "rows"],
  [`properties.${path("d", 16)}`, "contains", ["x"], ["deep16"], "rows"],
  [`properties.${path("d", 15)}`, "contains", ["x"], ["deep16"], "rows"],
  [`properties.${path("e", 16)}`, "isNotNull", [], ["deep17"], "rows"],
  [`properties.${path("e", 17)}`, "contains", ["x"], ["deep17"], "events"],
  ["properties.items.01", "contains", ["x2"], ["arrayItem"], "events"],
  // The negative operators keep sessions with an event that passes them: every session but those
  // with a row passing the positive counterpart (or a mark) none of whose events passes.
  ["properties.plan", "isNot", ["pro"], except("stringPro"), "complement"],
  ["properties.plan", "doesNotContain", ["r"], except("stringPro", "stringProCase"), "complement"],
  ["properties.plan", "isNull", [], except("stringPro", "stringProCase"), "complement"],
  ["properties.stage", "is", ["beta"], ["stageThenNone", "stageTwice"], "values"],
  ["properties.stage", "contains", ["bet"], ["stageObject", "stageThenNone", "stageTwice"], "rows"],
  ["properties.stage", "isNot", ["beta"], except("stageTwice"), "complement"],
  ["properties.stage", "isNot", ["beta", "alpha"], except("stageTwice"), "complement"],
  ["properties.stage", "isNot", ['{"v": "beta"}'], except("stageObject"), "complement"],
  ["properties.stage", "isNot", ["b".repeat(300)], except("stageLong"), "complement"],
  ["properties.stage", "doesNotContain", ["bet"], except("stageTwice", "stageObject"), "complement"],
  [
    "properties.stage",
    "doesNotContain",
    ["b"],
    except("stageTwice", "stageObject", "stageLong"),
    "complement",
  ],
  ["properties.stage", "isNull", [], except("stageTwice", "stageObject", "stageLong"), "complement"],
  ["properties.tier.name", "isNot", ["gold"], except("objectValue", "stringPro"), "complement"],
  ["properties.items.01.sku", "isNot", ["x2"], except("arrayItem"), "events"],
];

const sessionOf = (project: string, label: string) => `${project}-${label}`;

/**
 * One session per label in `project` (two events for the labels of SECOND_EVENT), each event's
 * properties written as raw jsonb before the refresh.
 */
async function load(project: string): Promise<void> {
  const labels = Object.keys(PROPERTIES);
  const seconds = Object.keys(SECOND_EVENT);
  const firsts = labels.map((label, index) => ({ label, at: T0 + index * MINUTE, raw: PROPERTIES[label] }));
  const later = seconds.map((label) => ({
    label,
    at: T0 + labels.indexOf(label) * MINUTE + MINUTE / 2,
    raw: SECOND_EVENT[label],
  }));
  const all = [...firsts, ...later];
  const ids = all.map(() => crypto.randomUUID());
  await insertEvents(
    database.db,
    all.map(({ label, at }, index) => ({
      id: ids[index],
      projectId: project,
      sessionId: sessionOf(project, label),
      createdAt: new Date(at),
    })),
    { refresh: false },
  );
  // One statement for all of them, each event's raw jsonb beside its id.
  const raw = all.map(({ raw }) => raw as string);
  await database.db.execute(sql`update events e set properties = v.properties::jsonb
    from unnest(${sql.param(ids)}::uuid[], ${sql.param(raw)}::text[]) as v(id, properties) where e.id = v.id`);
  await refreshUntilFolded(drizzleStatements(database.db), [], [project]);
}

let projectId = "";

beforeAll(async () => {
  projectId = uniqueId("properties");
  await load(projectId);
  // The same properties in another project: its sessions must never be counted for the first.
  await load(uniqueId("properties-other"));
});

async function sessionLabels(condition: SQL | undefined): Promise<string[]> {
  const rows = await database.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.projectId, projectId), condition));
  return rows.map((row) => row.id.slice(projectId.length + 1)).sort();
}

describe("a property filter on sessions", () => {
  it.each(CASES)("%s %s %j", async (name, operator, values, expected, source) => {
    const filters = parse([{ name, operator, value: values }]);
    const condition = sessionConditions(filters);
    expect(await sessionLabels(condition)).toEqual([...expected].sort());
    // The test that reads the session properties (with the marked sessions' events for `rows`), or
    // the one that reads the events' JSON.
    const text = new PgDialect().sqlToQuery(condition as SQL).sql;
    expect(text.includes('from "session_properties"')).toBe(source !== "events");
    expect(text.includes('"filter_property"."value" is null')).toBe(
      source === "rows" || source === "complement",
    );
    expect(text.startsWith("not exists")).toBe(source === "complement");
  });

  it("keeps what the events' JSON alone keeps, for every case", async () => {
    for (const [name, operator, values] of CASES) {
      const filters = parse([{ name, operator, value: values }]);
      const exact = sql`exists (select 1 from ${events} where ${events.projectId} = ${sessions.projectId}
        and ${events.sessionId} = ${sessions.id} and ${eventConditions(filters)})`;
      expect(await sessionLabels(sessionConditions(filters))).toEqual(await sessionLabels(exact));
    }
  });
});

describe("the session properties, kept with their sessions", () => {
  const AT = Date.UTC(2026, 4, 6, 12, 0, 0);

  /** Each session's leaves from its events' properties, here in TypeScript, with its start. */
  async function expectedRows(project: string): Promise<string[]> {
    const rows = await database.db
      .select({ sessionId: events.sessionId, createdAt: events.createdAt, properties: events.properties })
      .from(events)
      .where(eq(events.projectId, project));
    const starts = new Map<string, number>();
    for (const row of rows) {
      const start = starts.get(row.sessionId);
      if (start === undefined || row.createdAt.getTime() < start)
        starts.set(row.sessionId, row.createdAt.getTime());
    }
    const keys = new Set<string>();
    const add = (sessionId: string, path: string[], text: string | null) =>
      keys.add(JSON.stringify([sessionId, starts.get(sessionId), path, text]));
    // Objects and arrays, and texts over 256 bytes, are marked by a NULL value.
    const walk = (sessionId: string, value: unknown, path: string[]) => {
      if (value !== null && typeof value === "object" && path.length > 0) add(sessionId, path, null);
      if (Array.isArray(value))
        for (const [index, item] of value.entries()) walk(sessionId, item, [...path, String(index)]);
      else if (value !== null && typeof value === "object")
        for (const [key, item] of Object.entries(value)) walk(sessionId, item, [...path, key]);
      else if (value !== null && path.length > 0)
        add(sessionId, path, Buffer.byteLength(String(value)) > 256 ? null : String(value));
    };
    for (const row of rows) walk(row.sessionId, row.properties, []);
    return [...keys].sort();
  }

  async function storedRows(project: string): Promise<string[]> {
    const p = sessionProperties;
    const rows = await database.db.select().from(p).where(eq(p.projectId, project));
    return rows
      .map((row) => JSON.stringify([row.sessionId, row.startedAt.getTime(), row.path, row.value]))
      .sort();
  }

  it("follow new events, a session moved by an earlier event, and a full build", async () => {
    const project = uniqueId("properties-kept");
    const event = (sessionId: string, minute: number, properties: Record<string, unknown>): EventInput => ({
      projectId: project,
      sessionId,
      createdAt: new Date(AT + minute * MINUTE),
      properties,
    });
    await insertEvents(database.db, [
      event("s1", 0, { plan: "free", cart: { items: [{ sku: "a" }] } }),
      event("s1", 1, { plan: "free" }),
      event("s2", 2, {}),
      event("s3", 3, { plan: "pro", seats: 3, trial: false }),
    ]);
    expect(await storedRows(project)).toEqual(await expectedRows(project));
    // s1 upgrades; s2 gets its first property; s3 gets an earlier event, which moves its start.
    await insertEvents(database.db, [
      event("s1", 5, { plan: "pro", cart: { items: [{ sku: "a" }, { sku: "b" }] } }),
      event("s2", 6, { coupon: "SPRING", note: "n".repeat(300) }),
      event("s3", -10, { referrer_plan: "team", seats: 3 }),
    ]);
    const expected = await expectedRows(project);
    expect(expected).toContain(JSON.stringify(["s3", AT - 10 * MINUTE, ["seats"], "3"]));
    expect(expected).toContain(JSON.stringify(["s1", AT, ["cart", "items", "1", "sku"], "b"]));
    expect(expected).toContain(JSON.stringify(["s1", AT, ["cart", "items", "1"], null]));
    expect(expected).toContain(JSON.stringify(["s2", AT + 2 * MINUTE, ["note"], null]));
    expect(await storedRows(project)).toEqual(expected);
    // The migration's full build writes the same rows (rolled back: the table stays as kept).
    const rebuilt = await database.db
      .transaction(async (tx) => {
        await tx.execute(sql`select refresh_session_properties(true)`);
        const rows = await tx
          .select()
          .from(sessionProperties)
          .where(eq(sessionProperties.projectId, project));
        throw new RolledBack(
          rows.map((row) => JSON.stringify([row.sessionId, row.startedAt.getTime(), row.path, row.value])),
        );
      })
      .catch((error: unknown) => {
        if (error instanceof RolledBack) return error.rows.sort();
        throw error;
      });
    expect(rebuilt).toEqual(expected);
  });
});

class RolledBack extends Error {
  constructor(readonly rows: string[]) {
    super("rolled back");
  }
}
