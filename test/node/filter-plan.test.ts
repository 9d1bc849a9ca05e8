import { and, eq, type SQLWrapper, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { createScratchDatabase, type ScratchDatabase } from "../../scripts/db/scratch-database";
import type { DatabaseHandle } from "../../src/db/client";
import { sessionPages, sessions } from "../../src/db/schema";
import { SESSION_OF_PAGE_ROW, sessionConditions } from "../../src/queries/filter-conditions";
import { connect, type EventInput, insertEvents, uniqueId } from "../support/factories";
import { parse } from "../support/filter-input";

/**
 * The plans filtered queries take. They run in a database of its own: the planner weighs an index probe per outer row against comparing two small
 * sets in memory by the tables' sizes and statistics, and in the suite's shared database the other
 * tests' rows tipped it to the second plan now and then, whose join filter the count below reads
 * as rows thrown away.
 */

const T0 = Date.UTC(2026, 3, 1, 9, 0, 0);

let scratch: ScratchDatabase;
let database: DatabaseHandle;

beforeAll(async () => {
  scratch = await createScratchDatabase("filter_plan");
  await migrateDatabase(scratch.url);
  database = connect(scratch.url, inject("relayProxy"));
}, 120_000);

afterAll(async () => {
  await database?.close();
  await scratch?.drop();
});

/** A node of `EXPLAIN (ANALYZE, FORMAT JSON)`: the counts are per loop. */
interface PlanNode {
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Join Filter"?: number;
  Plans?: PlanNode[];
}

/** The rows a plan read and threw away in filters, over all its nodes and loops. */
function rowsDiscarded(node: PlanNode): number {
  const own =
    ((node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Join Filter"] ?? 0)) *
    node["Actual Loops"];
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsDiscarded(child), 0);
}

/**
 * The executed plan of `query` over a few rows, scans by index: without that the planner would
 * rightly read them whole.
 */
async function planWithIndexes(query: SQLWrapper): Promise<PlanNode> {
  return database.db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_seqscan = off`);
    const explained = await tx.execute<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      sql`explain (analyze, format json) ${query}`,
    );
    return explained.rows[0]?.["QUERY PLAN"][0].Plan as PlanNode;
  });
}

it("finds a page row's session, pages and names by the session's start in a nested loop", async () => {
  // Twelve sessions, each starting in its own minute, with two pages each.
  const projectId = uniqueId("filters-start");
  const inputs: EventInput[] = Array.from({ length: 12 }, (_, index) =>
    [0, 1].map((step) => ({
      id: crypto.randomUUID(),
      projectId,
      sessionId: `start-${index}`,
      deviceId: `d-${index}`,
      profileId: `d-${index}`,
      name: "screen_view",
      path: `/p${step}`,
      country: "NO",
      createdAt: new Date(T0 + index * 60_000 + step * 1_000),
    })),
  ).flat();
  await insertEvents(database.db, inputs);
  await database.db.execute(sql`analyze sessions, session_pages, session_names`);
  const filters = parse([
    { name: "country", operator: "is", value: ["NO"] },
    { name: "path", operator: "startsWith", value: ["/p"] },
    { name: "name", operator: "is", value: ["screen_view"] },
  ]);
  const condition = sessionConditions(filters, {
    of: SESSION_OF_PAGE_ROW,
  });
  const query = database.db
    .select({ id: sessionPages.sessionId })
    .from(sessionPages)
    .where(and(eq(sessionPages.projectId, projectId), condition));
  // Nested loops over indexes: the plan taken when the planner expects a small window (as for a
  // project its statistics predate). Matched by the session alone, each page row's lookup of its
  // pages or names read the project's other sessions' rows too (132 rows thrown away here).
  const { rows, discarded } = await database.db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_hashjoin = off`);
    await tx.execute(sql`set local enable_mergejoin = off`);
    await tx.execute(sql`set local enable_seqscan = off`);
    const explained = await tx.execute<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      sql`explain (analyze, format json) ${query}`,
    );
    const plan = explained.rows[0]?.["QUERY PLAN"][0].Plan as PlanNode;
    return { rows: plan["Actual Rows"], discarded: rowsDiscarded(plan) };
  });
  expect(rows).toBe(24);
  expect(discarded).toBe(0);
});

it("finds the sessions of a property filter `is` through the property values' index, reading no event", async () => {
  // Twenty sessions, every fourth with a purchase in USD, the others in EUR or without properties.
  const projectId = uniqueId("filters-property");
  const inputs: EventInput[] = Array.from({ length: 20 }, (_, index) => ({
    projectId,
    sessionId: `property-${index}`,
    name: "purchase",
    createdAt: new Date(T0 + index * 60_000),
    properties: index % 4 === 0 ? { currency: "USD", price: 49 } : index % 4 === 1 ? { currency: "EUR" } : {},
  }));
  await insertEvents(database.db, inputs);
  await database.db.execute(sql`analyze sessions, session_properties, events`);
  const filters = parse([{ name: "properties.currency", operator: "is", value: ["USD"] }]);
  const query = database.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.projectId, projectId), sessionConditions(filters)));
  const root = await planWithIndexes(query);
  const plan = JSON.stringify(root);
  expect(root["Actual Rows"]).toBe(5);
  expect(plan).toContain('"Index Name":"session_properties_project_value_idx"');
  expect(plan).not.toContain('"Relation Name":"events"');
});

/** The nodes of a plan that read `relation`, over all its subplans. */
function nodesOf(node: PlanNode, relation: string): PlanNode[] {
  const own = node["Relation Name"] === relation ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => nodesOf(child, relation))];
}

it("finds the sessions of a property filter `contains` or `isNot` by the path's rows, reading only the candidate sessions' events", async () => {
  // Twenty sessions, by fours: USD, EUR, an object (marked: `#>>` prints its JSON), none.
  const projectId = uniqueId("filters-property-rows");
  const currencies = [{ currency: "USD" }, { currency: "EUR" }, { currency: { code: "USD" } }, {}];
  const inputs: EventInput[] = Array.from({ length: 20 }, (_, index) => ({
    projectId,
    sessionId: `rows-${index}`,
    name: "purchase",
    createdAt: new Date(T0 + index * 60_000),
    properties: currencies[index % 4],
  }));
  await insertEvents(database.db, inputs);
  await database.db.execute(sql`analyze sessions, session_properties, events`);
  const filters = parse([{ name: "properties.currency", operator: "contains", value: ["US"] }]);
  const query = database.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.projectId, projectId), sessionConditions(filters)));
  const root = await planWithIndexes(query);
  // The USD sessions by their rows, the object's by their events (its text contains "USD").
  expect(root["Actual Rows"]).toBe(10);
  expect(nodesOf(root, "session_properties").map((node) => node["Index Name"])).toContain(
    "session_properties_project_value_idx",
  );
  const eventLoops = (plan: PlanNode) =>
    nodesOf(plan, "events").reduce((loops, node) => loops + node["Actual Loops"], 0);
  expect(eventLoops(root)).toBe(5);
  // `isNot "USD"` leaves out the sessions all of whose events are USD: its candidates are the USD
  // rows and the marks, and only their sessions' events are read (10 of 20).
  const negative = parse([{ name: "properties.currency", operator: "isNot", value: ["USD"] }]);
  const kept = await planWithIndexes(
    database.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.projectId, projectId), sessionConditions(negative))),
  );
  expect(kept["Actual Rows"]).toBe(15);
  expect(eventLoops(kept)).toBe(10);
});
