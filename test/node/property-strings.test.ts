import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import { BREAKDOWN_DIMENSIONS } from "../../src/lib/dimensions";
import { sessionBreakdown } from "../../src/queries/insights/breakdowns";
import { sessionMetrics } from "../../src/queries/insights/metrics";
import { bitStringFilters, type SessionScope } from "../../src/queries/insights/model";
import { topPages } from "../../src/queries/insights/pages";
import { combinedFilterMetrics } from "../../src/queries/insights/session-bits";
import { bitStringsCover } from "../../src/queries/insights/session-masks";
import { is } from "../support/dimension-filter-cases";
import { createOrganization, type EventInput, insertEvents, uniqueId } from "../support/factories";
import { type FilterInput, parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";

/**
 * A property's values have bit strings per day only while the day holds few of them, on few paths
 * (property_day_paths, src/db/routines/property_day_value_limit.sql): past either bound a filter on
 * the path over that day is answered exactly, and the path leaves the strings of that day one run
 * later. Each answer is held against the exact path over the same sessions.
 */

const database = testDatabase();
afterAll(() => database.close());

const DAY = 86_400_000;
const FROM = Date.UTC(2026, 6, 6);
const WINDOW = { start: FROM, end: FROM + 2 * DAY };
const ALL_ROWS = { offset: 0, limit: 1_000 };

async function limits(): Promise<{ values: number; paths: number }> {
  const result = await database.db.execute<{ values: number; paths: number }>(
    sql`select property_day_value_limit() as values, property_day_path_limit() as paths`,
  );
  const row = result.rows[0];
  return { values: Number(row?.values), paths: Number(row?.paths) };
}

async function newProject(label: string): Promise<string> {
  const projectId = uniqueId(label);
  const organizationId = await createOrganization(database.db);
  await database.db.insert(projects).values({ id: projectId, organizationId, name: projectId });
  return projectId;
}

/** Session `n` of the project on day `day` (0 or 1), one event carrying `properties`. */
function session(projectId: string, day: number, n: number, properties: Record<string, unknown>): EventInput {
  return {
    projectId,
    sessionId: `s-${day}-${n}`,
    createdAt: new Date(FROM + day * DAY + 60_000 * (n + 1)),
    name: "checkout",
    path: n % 2 === 0 ? "/cart" : "/pay",
    country: n % 3 === 0 ? "NO" : "SE",
    device: n % 4 === 0 ? "mobile" : "desktop",
    properties,
  };
}

function scopeOf(projectId: string, filters: FilterInput[], rollups: boolean): SessionScope {
  return {
    projectId,
    window: WINDOW,
    filters: parse(filters),
    rollups,
    projectTimezone: "UTC",
    regexMatchesEmpty: false,
  };
}

/** The path's rows of property_day_paths, by day: its values, or null past a bound. */
async function dayPaths(projectId: string, path: string[]) {
  const result = await database.db.execute<{ day: string; names: string[] | null }>(sql`
    select day, names from property_day_paths where project_id = ${projectId} and path = ${sql.param(path)}::text[] order by day`);
  return result.rows.map((row) => ({ day: new Date(row.day).getTime(), names: row.names }));
}

/** How many strings the path's values have, per table, in the project. */
async function stringsOf(projectId: string, path: string[]) {
  const dimension = `property:${JSON.stringify(path)}`;
  const result = await database.db.execute<{ sessions: number; visitors: number; mixed: number }>(sql`
    select (select count(*) from session_day_bits where project_id = ${projectId} and dimension = ${dimension})::int as sessions,
      (select count(*) from visitor_day_bits where project_id = ${projectId} and dimension = ${dimension})::int as visitors,
      (select count(*) from visitor_day_mixed where project_id = ${projectId} and dimension = ${dimension})::int as mixed`);
  return result.rows[0];
}

/**
 * Metrics by day, every breakdown and the top pages: the same from the strings' scope as exactly,
 * and the strings cover the scope (`fromStrings`) or not, so that no comparison is of the exact
 * path with itself unawares.
 */
async function expectExactAnswers(
  projectId: string,
  filters: FilterInput[],
  fromStrings: boolean,
): Promise<void> {
  const answered = scopeOf(projectId, filters, true);
  const exact = scopeOf(projectId, filters, false);
  expect({ filters, fromStrings: await bitStringsCover(database.db, answered, []) }).toEqual({
    filters,
    fromStrings,
  });
  const days = [WINDOW.start, WINDOW.start + DAY];
  expect(await sessionMetrics(database.db, answered, days)).toEqual(
    await sessionMetrics(database.db, exact, days),
  );
  for (const dimension of BREAKDOWN_DIMENSIONS) {
    expect({ dimension, rows: await sessionBreakdown(database.db, answered, dimension, ALL_ROWS) }).toEqual({
      dimension,
      rows: await sessionBreakdown(database.db, exact, dimension, ALL_ROWS),
    });
  }
  expect(await topPages(database.db, answered, ALL_ROWS)).toEqual(
    await topPages(database.db, exact, ALL_ROWS),
  );
}

describe("property strings per day", () => {
  it("keep a path's values while a day holds few of them, and leave the strings of a day it passes the bound in", async () => {
    const { values } = await limits();
    const projectId = await newProject("property-values-bound");
    const plans = ["free", "pro", "team"];
    // Day 0: as many order ids as the bound allows; day 1: a few.
    const firstDay = Array.from({ length: values }, (_, n) =>
      session(projectId, 0, n, { order_id: `o-${n}`, plan: plans[n % 3] }),
    );
    const secondDay = Array.from({ length: 5 }, (_, n) =>
      session(projectId, 1, n, { order_id: `p-${n}`, plan: plans[n % 2] }),
    );
    await insertEvents(database.db, [...firstDay, ...secondDay]);
    const orderDays = await dayPaths(projectId, ["order_id"]);
    expect(orderDays.map(({ day, names }) => ({ day, values: names?.length }))).toEqual([
      { day: FROM, values },
      { day: FROM + DAY, values: 5 },
    ]);
    expect(await dayPaths(projectId, ["plan"])).toEqual([
      { day: FROM, names: ["free", "pro", "team"] },
      { day: FROM + DAY, names: ["free", "pro"] },
    ]);
    const orderFilter = [
      is("properties.order_id", "is", ["o-3", "p-1"]),
      is("device", "is", ["mobile", "desktop"]),
    ];
    expect(bitStringFilters(scopeOf(projectId, orderFilter, true))?.length).toBe(2);
    expect(await bitStringsCover(database.db, scopeOf(projectId, orderFilter, true), [])).toBe(true);
    expect(await stringsOf(projectId, ["order_id"])).toEqual({
      sessions: values + 5,
      visitors: values + 5,
      mixed: 0,
    });
    await expectExactAnswers(projectId, orderFilter, true);

    // A later run brings day 0 one order id more, on a session already numbered, and takes the
    // path past the bound there; a visitor of day 0 starts a second session with another order
    // id. That run still writes the path's strings of the day, every value (the continuing
    // session's bits cleared and set again, the visitor listed as holding one value in some of its
    // sessions): a request that found them there just before it committed, and reads them in later
    // statements, reads them whole.
    const continuing = session(projectId, 0, 0, { order_id: "o-late", plan: "pro" });
    await insertEvents(database.db, [
      { ...continuing, createdAt: new Date(continuing.createdAt.getTime() + 30_000) },
      { ...session(projectId, 0, values, { order_id: "o-2" }), profileId: "d-s-0-1" },
    ]);
    expect((await dayPaths(projectId, ["order_id"])).map(({ names }) => names?.length ?? null)).toEqual([
      null,
      5,
    ]);
    expect(await stringsOf(projectId, ["order_id"])).toEqual({
      sessions: values + 6,
      visitors: values + 6,
      mixed: 1,
    });
    expect(await bitStringsCover(database.db, scopeOf(projectId, orderFilter, true), [])).toBe(false);
    await expectExactAnswers(projectId, orderFilter, false);
    // A request that found them there before the run committed reads them after it, as the exact
    // path answers now (the late order among them).
    const raced = [
      is("properties.order_id", "is", ["o-late", "o-2", "o-3", "p-1"]),
      is("device", "is", ["mobile", "desktop"]),
    ];
    const racedScope = scopeOf(projectId, raced, true);
    const days = [WINDOW.start, WINDOW.start + DAY];
    const exactly = await sessionMetrics(database.db, scopeOf(projectId, raced, false), days);
    expect([exactly.totals.total_sessions, exactly.totals.unique_visitors]).toEqual([5, 5]);
    expect(
      await combinedFilterMetrics(database.db, racedScope, bitStringFilters(racedScope) ?? [], days),
    ).toEqual(exactly);
    // The next run that meets the path in that day deletes them.
    await insertEvents(database.db, [session(projectId, 0, values + 1, { order_id: "o-later" })]);
    expect(await stringsOf(projectId, ["order_id"])).toEqual({ sessions: 5, visitors: 5, mixed: 0 });
    await expectExactAnswers(projectId, orderFilter, false);
    // A window of day 1 alone still has them; the other path keeps its strings on both days.
    const dayOne = {
      ...scopeOf(projectId, orderFilter, true),
      window: { start: FROM + DAY, end: FROM + 2 * DAY },
    };
    expect(await bitStringsCover(database.db, dayOne, [])).toBe(true);
    const planFilter = [is("properties.plan", "is", ["pro"]), is("country", "is", ["NO"])];
    expect(await bitStringsCover(database.db, scopeOf(projectId, planFilter, true), [])).toBe(true);
    await expectExactAnswers(projectId, planFilter, true);
    await expectExactAnswers(projectId, [is("properties.plan", "is", ["team", "free"])], true);
    // No more values come back to a path past the bound.
    await insertEvents(database.db, [session(projectId, 0, values + 2, { order_id: "o-3" })]);
    expect((await dayPaths(projectId, ["order_id"]))[0]?.names).toBeNull();
  });

  it("keep the first paths of a day up to the bound, and answer the others exactly", async () => {
    const { paths, values } = await limits();
    const projectId = await newProject("property-paths-bound");
    // One session per path, in key order, so that the first `paths` keys of the day are kept. Each
    // also carries `a_many`, which sorts first and holds more values than the bound: it takes no
    // place among the paths with strings.
    const key = (n: number) => `k${String(n).padStart(3, "0")}`;
    await insertEvents(
      database.db,
      Array.from({ length: paths + 3 }, (_, n) =>
        session(projectId, 0, n, { [key(n)]: "yes", a_many: `v${n % (values + 1)}` }),
      ),
    );
    const result = await database.db.execute<{ path: string[]; names: string[] | null }>(sql`
      select path, names from property_day_paths where project_id = ${projectId} order by path`);
    expect(result.rows.filter((row) => row.names !== null).length).toBe(paths);
    expect(result.rows.filter((row) => row.names === null).map((row) => row.path)).toEqual([
      ["a_many"],
      ...[paths, paths + 1, paths + 2].map((n) => [key(n)]),
    ]);
    const kept = [is(`properties.${key(0)}`, "is", ["yes"])];
    const past = [is(`properties.${key(paths + 1)}`, "is", ["yes"])];
    expect(await bitStringsCover(database.db, scopeOf(projectId, kept, true), [])).toBe(true);
    expect(await bitStringsCover(database.db, scopeOf(projectId, past, true), [])).toBe(false);
    await expectExactAnswers(projectId, kept, true);
    await expectExactAnswers(projectId, past, false);
  });

  it("give a path of the event strings that held marks alone a place among the day's paths once it has values", async () => {
    const { paths } = await limits();
    const projectId = await newProject("property-paths-marked");
    const key = (n: number) => `k${String(n).padStart(3, "0")}`;
    // The day's places all taken, and `note` holding only a long text (a mark, no value).
    await insertEvents(database.db, [
      ...Array.from({ length: paths }, (_, n) => session(projectId, 0, n, { [key(n)]: "yes" })),
      session(projectId, 0, paths, { note: "x".repeat(300) }),
    ]);
    const notePath = async () => {
      const result = await database.db.execute<{ names: string[] | null; marked: boolean }>(sql`
        select names, marked from event_property_day_paths where project_id = ${projectId} and path = '{note}'`);
      return result.rows;
    };
    expect(await notePath()).toEqual([{ names: [], marked: true }]);
    // Its first value comes after the places are taken: it has none left.
    await insertEvents(database.db, [session(projectId, 0, paths + 1, { note: "short" })]);
    expect(await notePath()).toEqual([{ names: null, marked: true }]);
    const kept = await database.db.execute<{ paths: number; strings: number }>(sql`
      select (select count(*) from event_property_day_paths where project_id = ${projectId}
          and cardinality(names) > 0)::int as paths,
        (select count(distinct dimension) from event_day_bits where project_id = ${projectId}
          and dimension like 'property:%')::int as strings`);
    expect(kept.rows[0]).toEqual({ paths, strings: paths });
  });

  it("hold a session under each value its events carry at a path, and leave out the objects and long texts", async () => {
    const projectId = await newProject("property-values-held");
    const first = session(projectId, 0, 0, { plan: "pro", cart: { size: 2 } });
    const events: EventInput[] = [
      first,
      {
        ...first,
        createdAt: new Date(first.createdAt.getTime() + 1_000),
        properties: { plan: "free", note: "x".repeat(300) },
      },
      session(projectId, 0, 1, { plan: "free" }),
    ];
    await insertEvents(database.db, events);
    expect(await dayPaths(projectId, ["plan"])).toEqual([{ day: FROM, names: ["free", "pro"] }]);
    // The object and the long text are marks (a NULL value), which have no strings.
    expect(await dayPaths(projectId, ["cart"])).toEqual([]);
    expect(await dayPaths(projectId, ["note"])).toEqual([]);
    expect(await dayPaths(projectId, ["cart", "size"])).toEqual([{ day: FROM, names: ["2"] }]);
    await expectExactAnswers(projectId, [is("properties.plan", "is", ["free"])], true);
    await expectExactAnswers(projectId, [is("properties.plan", "contains", ["r"])], true);
    // An operator that may match a marked text reads the raw sessions, in a window with a mark.
    for (const filter of [
      is("properties.cart", "contains", ["size"]),
      is("properties.note", "startsWith", ["xx"]),
    ]) {
      const scope = scopeOf(projectId, [filter], true);
      expect({ filter, covered: await bitStringsCover(database.db, scope, []) }).toEqual({
        filter,
        covered: false,
      });
      await expectExactAnswers(projectId, [filter], false);
      expect((await sessionMetrics(database.db, scope, [FROM])).totals.total_sessions).toBe(1);
    }
    await expectExactAnswers(
      projectId,
      [is("properties.plan", "is", ["pro"]), is("properties.cart.size", "is", [2])],
      true,
    );
  });
});
