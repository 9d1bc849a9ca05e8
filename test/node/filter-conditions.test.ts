import { and, eq, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { afterAll, describe, expect, it } from "vitest";
import { events, sessionPages, sessions } from "../../src/db/schema";
import { ApiError } from "../../src/lib/errors";
import {
  assertValidRegexes,
  eventConditions,
  SESSION_OF_PAGE_ROW,
  sessionConditions,
} from "../../src/queries/filter-conditions";
import { type EventInput, insertEvents, uniqueId } from "../support/factories";
import { parse } from "../support/filter-input";
import {
  byLabel,
  type Cases,
  EVENT_ON_SESSION_CASES,
  expectedEvents,
  expectedSessions,
  NUMERIC_CASES,
  OPERATORS,
  PROPERTY_CASES,
  ROWS,
  SESSION_ATTRIBUTE_CASES,
  TEXT_CASES,
} from "../support/filter-rows";
import { testDatabase } from "../support/node/database";

const database = testDatabase();
afterAll(() => database.close());

// The data set, the reference and the case tables: test/support/filter-rows.ts.

const T0 = Date.UTC(2026, 3, 1, 9, 0, 0);

/** Inserts the data set into a fresh project; returns the project and the event id → label map. */
async function seed(): Promise<{ projectId: string; labels: Map<string, string> }> {
  const projectId = uniqueId("filters");
  const labels = new Map<string, string>();
  const inputs: EventInput[] = ROWS.map((r) => {
    const id = crypto.randomUUID();
    labels.set(id, r.label);
    const { label: _label, minute, ...columns } = r;
    return { ...columns, id, projectId, createdAt: new Date(T0 + minute * 60_000) };
  });
  await insertEvents(database.db, inputs);
  return { projectId, labels };
}

// ---------------------------------------------------------------------------------------------
// Parsing helpers (through the real query parameter schema) and SQL runners.
// ---------------------------------------------------------------------------------------------

async function eventLabels(projectId: string, labels: Map<string, string>, condition: SQL | undefined) {
  const rows = await database.db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.projectId, projectId), condition));
  return rows.map((r) => labels.get(r.id) ?? r.id).sort(byLabel);
}

async function sessionIds(projectId: string, condition: SQL | undefined) {
  const rows = await database.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.projectId, projectId), condition));
  return rows.map((r) => r.id).sort(byLabel);
}

describe("filter semantics against the contract's wording", () => {
  const matrix: Array<[string, string, "events" | "sessions", Cases]> = [
    ["a text column", "path", "events", TEXT_CASES],
    ["a numeric column", "duration", "events", NUMERIC_CASES],
    ["a nested property", "properties.cart.price", "events", PROPERTY_CASES],
    ["a session attribute on sessions", "referrer_name", "sessions", SESSION_ATTRIBUTE_CASES],
    ["an event field on sessions", "path", "sessions", EVENT_ON_SESSION_CASES],
  ];

  for (const [title, name, target, cases] of matrix) {
    describe(`${title} (${name} over ${target})`, () => {
      it.each(OPERATORS)("%s", async (operator) => {
        const values = cases[operator] ?? [];
        const { projectId, labels } = await seed();
        const filters = parse([{ name, operator, value: values }]);
        if (target === "events") {
          const expected = expectedEvents(name, operator, values);
          expect(await eventLabels(projectId, labels, eventConditions(filters))).toEqual(expected);
        } else {
          const expected = expectedSessions(name, operator, values);
          expect(await sessionIds(projectId, sessionConditions(filters))).toEqual(expected);
        }
      });
    });
  }

  it("covers every operator in each case table", () => {
    for (const cases of [
      TEXT_CASES,
      NUMERIC_CASES,
      PROPERTY_CASES,
      SESSION_ATTRIBUTE_CASES,
      EVENT_ON_SESSION_CASES,
    ]) {
      expect(Object.keys(cases).sort()).toEqual(
        [
          "contains",
          "doesNotContain",
          "endsWith",
          "gt",
          "gte",
          "is",
          "isNot",
          "isNull",
          "isNotNull",
          "lt",
          "lte",
          "regex",
          "startsWith",
        ].sort(),
      );
    }
  });
});

describe("filter semantics, spelled out", () => {
  it("doesNotContain with several values drops rows containing any of them (keeps nulls)", async () => {
    const { projectId, labels } = await seed();
    const filters = parse([{ name: "path", operator: "doesNotContain", value: ["blog", "%", "a"] }]);
    // Not "always true" (OpenPanel's bug): only paths free of all three, plus the null path.
    expect(await eventLabels(projectId, labels, eventConditions(filters))).toEqual([
      "e2",
      "e6",
      "e7",
      "e10",
      "e11",
      "e12",
      "e17",
    ]);
  });

  it("isNot matches rows where the field is null", async () => {
    const { projectId, labels } = await seed();
    const filters = parse([{ name: "referrerName", operator: "isNot", value: ["Google", "Bing"] }]);
    const result = await eventLabels(projectId, labels, eventConditions(filters));
    expect(result).toContain("e3"); // referrer_name is null
    expect(result).toContain("e6"); // empty string is not "Google"
    expect(result).not.toContain("e1");
    expect(result).not.toContain("e2");
    expect(result).toEqual(expectedEvents("referrerName", "isNot", ["Google", "Bing"]));
  });

  it("takes %, _ and \\ literally in contains, startsWith and endsWith", async () => {
    const { projectId, labels } = await seed();
    const run = async (operator: string, value: string) =>
      eventLabels(projectId, labels, eventConditions(parse([{ name: "path", operator, value: [value] }])));
    expect(await run("contains", "_")).toEqual(["e4"]); // not "/axb"
    expect(await run("contains", "%")).toEqual(["e1", "e14", "e15"]);
    expect(await run("contains", "a%b")).toEqual(["e15"]);
    expect(await run("contains", "\\dir\\")).toEqual(["e7"]);
    expect(await run("startsWith", "/a_")).toEqual(["e4"]);
    expect(await run("endsWith", "0%")).toEqual(["e1", "e14"]);
    expect(await run("endsWith", "\\file")).toEqual(["e7"]);
    expect(await run("is", "/a_b")).toEqual(["e4"]);
  });

  it("is case-sensitive and handles quotes and unicode", async () => {
    const { projectId, labels } = await seed();
    const run = async (name: string, operator: string, value: Array<string | number>) =>
      eventLabels(projectId, labels, eventConditions(parse([{ name, operator, value }])));
    expect(await run("path", "is", ["/café"])).toEqual(["e8"]);
    expect(await run("path", "startsWith", ["/Caf"])).toEqual(["e9"]);
    expect(await run("referrer_name", "is", ["google"])).toEqual(["e10"]);
    expect(await run("referrer_name", "contains", ["Ä"])).toEqual(["e8"]);
    expect(await run("referrer_name", "is", [`O'Reilly "Media"`])).toEqual(["e12"]);
    expect(await run("path", "is", ["/it's"])).toEqual(["e12"]);
    expect(await run("properties.note", "is", ['say "hi"'])).toEqual(["e1"]);
  });

  it('compares a property\'s text form, so 49 and "49" match both', async () => {
    const { projectId, labels } = await seed();
    for (const value of [49, "49"]) {
      const filters = parse([{ name: "properties.cart.price", operator: "is", value: [value] }]);
      expect(await eventLabels(projectId, labels, eventConditions(filters))).toEqual(["e1", "e2"]);
    }
  });

  it("never errors on non-numeric text in numeric comparisons; it just does not match", async () => {
    const { projectId, labels } = await seed();
    const filters = parse([{ name: "properties.cart.price", operator: "gte", value: [-1000] }]);
    // "12abc", " 7", "-", "" and "not an object" are skipped; "1e3" and "-3.5" are numbers.
    expect(await eventLabels(projectId, labels, eventConditions(filters))).toEqual([
      "e1",
      "e2",
      "e4",
      "e7",
      "e8",
      "e12",
      "e14",
    ]);
  });

  it("ANDs several filters, mixing session attributes and event fields", async () => {
    const { projectId, labels } = await seed();
    const filters = parse([
      { name: "referrer_name", operator: "isNotNull" },
      { name: "path", operator: "startsWith", value: ["/blog"] },
      { name: "duration", operator: "gt", value: [100] },
    ]);
    // Events: all three must hold on the same row.
    expect(await eventLabels(projectId, labels, eventConditions(filters))).toEqual(["e1"]);
    // Sessions: the session's referrer, and each event filter satisfied by some event of it.
    expect(await sessionIds(projectId, sessionConditions(filters))).toEqual(["s1", "s6"]);

    // Each event-field filter is its own EXISTS: different events of s1 may satisfy them.
    const split = parse([
      { name: "name", operator: "is", value: ["purchase"] },
      { name: "duration", operator: "gte", value: [20_000] },
    ]);
    expect(await sessionIds(projectId, sessionConditions(split))).toEqual(["s1"]);
    expect(await eventLabels(projectId, labels, eventConditions(split))).toEqual([]);
  });

  it("names the same sessions from their pages as from their rows, several session attributes at once", async () => {
    const { projectId } = await seed();
    const filters = parse([
      { name: "referrer_name", operator: "isNotNull" },
      { name: "country", operator: "isNot", value: ["XX"] },
      { name: "path", operator: "startsWith", value: ["/"] },
    ]);
    const fromRows = await sessionIds(projectId, sessionConditions(filters));
    // Read from session_pages, the session attributes are one lookup of the session's row.
    const condition = sessionConditions(filters, {
      of: SESSION_OF_PAGE_ROW,
    });
    expect(new PgDialect().sqlToQuery(condition as SQL).sql.match(/from "sessions"/g)).toHaveLength(1);
    const rows = await database.db
      .selectDistinct({ id: sessionPages.sessionId })
      .from(sessionPages)
      .where(and(eq(sessionPages.projectId, projectId), condition));
    expect(rows.map((r) => r.id).sort(byLabel)).toEqual(fromRows);
    expect(fromRows.length).toBeGreaterThan(0);
  });

  it("on sessions, uses the first event's attributes, not later events'", async () => {
    const { projectId } = await seed();
    // s1's second event says Bing, s7's first says "2024" and its second Bing.
    const bing = parse([{ name: "referrerName", operator: "is", value: ["Bing"] }]);
    expect(await sessionIds(projectId, sessionConditions(bing))).toEqual([]);
    const visitor = parse([{ name: "profileId", operator: "is", value: ["user-1"] }]);
    expect(await sessionIds(projectId, sessionConditions(visitor))).toEqual(["s6"]);
    const session = parse([{ name: "sessionId", operator: "is", value: ["s2", "s4"] }]);
    expect(await sessionIds(projectId, sessionConditions(session))).toEqual(["s2", "s4"]);
    const revenue = parse([{ name: "revenue", operator: "gt", value: [1000] }]);
    expect(await sessionIds(projectId, sessionConditions(revenue))).toEqual(["s1"]);
  });

  it("accepts camelCase spellings", async () => {
    const { projectId, labels } = await seed();
    const snake = parse([{ name: "utm_source", operator: "contains", value: ["_"] }]);
    const camel = parse([{ name: "utmSource", operator: "contains", value: ["_"] }]);
    expect(camel[0]?.field).toEqual(snake[0]?.field);
    expect(await eventLabels(projectId, labels, eventConditions(camel))).toEqual(["e1"]);
    expect(await eventLabels(projectId, labels, eventConditions(parse([])))).toHaveLength(ROWS.length);
  });

  it("reads property keys with quotes, braces, commas and backslashes as one bound key path", async () => {
    const projectId = uniqueId("filters-keys");
    const key = `we'ird "key",{x}\\`;
    await insertEvents(database.db, [
      { projectId, sessionId: "k1", createdAt: new Date(T0), properties: { [key]: { "a b": "yes" } } },
      { projectId, sessionId: "k2", createdAt: new Date(T0), properties: { other: "yes" } },
    ]);
    const filters = parse([{ name: `properties.${key}.a b`, operator: "is", value: ["yes"] }]);
    expect(await sessionIds(projectId, sessionConditions(filters))).toEqual(["k1"]);
  });
});

describe("regular expressions", () => {
  it("uses Postgres POSIX semantics", async () => {
    const { projectId, labels } = await seed();
    const filters = parse([{ name: "path", operator: "regex", value: ["^/blog/[[:digit:]]+$"] }]);
    await assertValidRegexes(database.db, filters);
    expect(await eventLabels(projectId, labels, eventConditions(filters))).toEqual(["e3", "e13", "e16"]);
  });

  it("accepts valid patterns in one go", async () => {
    const filters = parse([
      { name: "path", operator: "regex", value: ["^/a", "b$", "(x|y)+"] },
      { name: "country", operator: "is", value: ["NO"] },
      { name: "properties.plan", operator: "regex", value: ["^pro$"] },
    ]);
    // None of these matches the empty text; without regex filters there is nothing to match it.
    await expect(assertValidRegexes(database.db, filters)).resolves.toBe(false);
    await expect(assertValidRegexes(database.db, parse([]))).resolves.toBe(false);
    // "(x|y)*" matches "" (POSIX, as Postgres reads it): the rollups must not answer such a filter.
    const empty = parse([{ name: "country", operator: "regex", value: ["^N", "(x|y)*"] }]);
    await expect(assertValidRegexes(database.db, empty)).resolves.toBe(true);
  });

  it("rejects an invalid pattern with a 400 pointing at its filter", async () => {
    const filters = parse([
      { name: "path", operator: "regex", value: ["^/ok$"] },
      { name: "country", operator: "is", value: ["("] },
      { name: "referrer", operator: "regex", value: ["fine", "(unclosed"] },
    ]);
    const error = await assertValidRegexes(database.db, filters).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.status).toBe(400);
    expect(apiError.code).toBe("VALIDATION_FAILED");
    expect(apiError.errors).toHaveLength(1);
    expect(apiError.errors[0]?.path).toBe("filters/2/value");
    expect(apiError.errors[0]?.message).toMatch(/^invalid regular expression/);
    expect(apiError.errors[0]?.message).toContain("(unclosed");
  });

  it("judges patterns by Postgres, not JavaScript", async () => {
    // A named group is fine in JavaScript but not in Postgres.
    const filters = parse([{ name: "path", operator: "regex", value: ["(?<year>[0-9]{4})"] }]);
    const error = await assertValidRegexes(database.db, filters, "series/0/filters").catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).errors[0]?.path).toBe("series/0/filters/0/value");
  });
});

describe("bound parameters", () => {
  it("never puts a value or a property key into the SQL text", () => {
    const marker = "zq'\"x;--";
    const filters = parse([
      { name: `properties.${marker}key.${marker}nested`, operator: "is", value: [`${marker}v1`, 7777] },
      { name: "path", operator: "contains", value: [`${marker}v2`] },
      { name: "path", operator: "doesNotContain", value: [`${marker}v3`, `${marker}v4`] },
      { name: "referrer", operator: "startsWith", value: [`${marker}v5`] },
      { name: "country", operator: "endsWith", value: [`${marker}v6`] },
      { name: "browser", operator: "regex", value: [`${marker}v7`] },
      { name: "city", operator: "isNot", value: [`${marker}v8`] },
      { name: "duration", operator: "gt", value: [8888] },
      { name: `properties.${marker}n`, operator: "lte", value: ["9999"] },
      { name: "revenue", operator: "is", value: [6666] },
    ]);
    const dialect = new PgDialect();
    for (const condition of [eventConditions(filters), sessionConditions(filters)]) {
      if (!condition) throw new Error("no condition");
      const query = dialect.sqlToQuery(condition);
      for (const fragment of ["zq", "key", "nested", "7777", "8888", "9999", "6666", "v1", "v8"]) {
        expect(query.sql).not.toContain(fragment);
      }
      const params = JSON.stringify(query.params);
      for (const fragment of [
        "v1",
        "v2",
        "v3",
        "v4",
        "v5",
        "v6",
        "v7",
        "v8",
        "key",
        "nested",
        "8888",
        "9999",
      ]) {
        expect(params).toContain(fragment);
      }
      // The key path is one text[] parameter, not a list of placeholders.
      expect(query.params).toContainEqual([`${marker}key`, `${marker}nested`]);
    }
  });

  it("also binds the values of the query built by db.select()", () => {
    const filters = parse([{ name: "properties.secret", operator: "is", value: ["s3cr3t"] }]);
    const query = database.db.select({ id: events.id }).from(events).where(eventConditions(filters)).toSQL();
    expect(query.sql).not.toContain("secret");
    expect(query.sql).not.toContain("s3cr3t");
    expect(query.params).toEqual([["secret"], "s3cr3t"]);
  });
});
