import { and, eq, type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, sessionProperties, sessions } from "../../src/db/schema";
import { sessionConditions } from "../../src/queries/filter-conditions";
import { type EventInput, insertEvents, uniqueId } from "../support/factories";
import { parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import { drizzleStatements, refreshUntilFolded } from "../support/watermarks";

// A property filter `is` on sessions reads the session properties (the leaves of each session's
// events' properties, src/queries/property-leaves.ts) where they answer it, and the events' JSON
// elsewhere. These events hold every JSON shape `#>>` prints (strings, numbers as written,
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
};

/** Each filter, the labels of the sessions it keeps, and whether the session properties answer it. */
const CASES: Array<[string, Array<string | number>, string[], "leaves" | "events"]> = [
  ["properties.plan", ["pro"], ["stringPro"], "leaves"],
  ["properties.plan", ["pro", "Pro"], ["stringPro", "stringProCase"], "leaves"],
  ["properties.plan", [""], ["emptyString"], "leaves"],
  ["properties.plan", ["null"], [], "leaves"],
  ["properties.price", ["49"], ["number49", "string49"], "leaves"],
  ["properties.price", [49], ["number49", "string49"], "leaves"],
  ["properties.price", ["49.0"], ["number49point0"], "leaves"],
  ["properties.price", ["1.50"], ["numberHalf"], "leaves"],
  ["properties.price", ["1.5"], [], "leaves"],
  ["properties.flag", ["true"], ["boolTrue", "stringTrue"], "leaves"],
  ["properties.big", ["12345678901234567890"], ["bigNumber"], "leaves"],
  ["properties.tier.name", ["gold"], ["objectValue", "stringPro"], "leaves"],
  ["properties.items.1.sku", ["x2"], ["arrayItem"], "leaves"],
  ["properties.slots.0", ["first"], ["keyedZero"], "leaves"],
  ["properties.0", ["first"], ["topArray"], "leaves"],
  ["properties.1.k", ["v"], ["topArray"], "leaves"],
  // Positions the leaves write otherwise ("01" is element 1 of an array, or the key "01").
  ["properties.items.01.sku", ["x2"], ["arrayItem"], "events"],
  ["properties.slots.01", ["second"], ["keyedZero"], "events"],
  ["properties.items.-1.sku", ["x2"], ["arrayItem"], "events"],
  // Values printed as objects and arrays, in jsonb's own spacing; a value longer than a leaf keeps.
  ["properties.tier", ['{"name": "gold", "rank": 1}'], ["objectValue"], "events"],
  ["properties.tags", ['["a", "b"]'], ["arrayValue"], "events"],
  ["properties.tags", ['["a","b"]'], [], "events"],
  ["properties.note", ["x".repeat(300)], ["longValue"], "events"],
  ["properties.note", ["x".repeat(300), "y"], ["longValue"], "events"],
  ["properties.edge", ["é".repeat(128)], ["edgeValue"], "leaves"],
  [`properties.${Array.from({ length: 16 }, () => "d").join(".")}`, ["x"], ["deep16"], "leaves"],
  [`properties.${Array.from({ length: 17 }, () => "e").join(".")}`, ["x"], ["deep17"], "events"],
];

const sessionOf = (project: string, label: string) => `${project}-${label}`;

/** One session per label in `project`, its event's properties written as raw jsonb before the refresh. */
async function load(project: string): Promise<void> {
  const labels = Object.keys(PROPERTIES);
  const ids = labels.map(() => crypto.randomUUID());
  await insertEvents(
    database.db,
    labels.map((label, index) => ({
      id: ids[index],
      projectId: project,
      sessionId: sessionOf(project, label),
      createdAt: new Date(T0 + index * MINUTE),
    })),
    { refresh: false },
  );
  // One statement for all of them, each event's raw jsonb beside its id.
  const raw = labels.map((label) => PROPERTIES[label] as string);
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

describe("a property filter `is` on sessions", () => {
  it.each(CASES)("%s is %j", async (name, values, expected, source) => {
    const filters = parse([{ name, operator: "is", value: values }]);
    const condition = sessionConditions(filters);
    expect(await sessionLabels(condition)).toEqual([...expected].sort());
    // The test that reads the session properties, or the one that reads the events' JSON.
    const text = new PgDialect().sqlToQuery(condition as SQL).sql;
    expect(text.includes('from "session_properties"')).toBe(source === "leaves");
  });

  it("keeps what the events' JSON alone keeps, for every case", async () => {
    for (const [name, values] of CASES) {
      const path = name.slice("properties.".length).split(".");
      const exact = sql`exists (select 1 from ${events} e where e.project_id = ${sessions.projectId}
        and e.session_id = ${sessions.id} and (e.properties #>> ${sql.param(path)}::text[]) in (${sql.join(
          values.map((value) => sql`${String(value)}`),
          sql`, `,
        )}))`;
      const filters = parse([{ name, operator: "is", value: values }]);
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
    const walk = (sessionId: string, value: unknown, path: string[]) => {
      if (Array.isArray(value))
        for (const [index, item] of value.entries()) walk(sessionId, item, [...path, String(index)]);
      else if (value !== null && typeof value === "object")
        for (const [key, item] of Object.entries(value)) walk(sessionId, item, [...path, key]);
      else if (value !== null && path.length > 0)
        keys.add(JSON.stringify([sessionId, starts.get(sessionId), path, String(value)]));
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
      event("s2", 6, { coupon: "SPRING" }),
      event("s3", -10, { referrer_plan: "team", seats: 3 }),
    ]);
    const expected = await expectedRows(project);
    expect(expected).toContain(JSON.stringify(["s3", AT - 10 * MINUTE, ["seats"], "3"]));
    expect(expected).toContain(JSON.stringify(["s1", AT, ["cart", "items", "1", "sku"], "b"]));
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
