import { beforeAll, describe, expect, it } from "vitest";
import {
  declaredTextArray,
  functionChanges,
  latestCopies,
  type Migration,
  type RoutineFile,
  readMigrations,
  readRoutineFiles,
  restatingMigration,
  routineDifferences,
  routineFileProblems,
} from "../../scripts/db/routine-files";
import {
  BREAKDOWN_DIMENSIONS,
  CHART_PAIR_COLUMNS,
  CHART_ROLLUP_COLUMNS,
  DIMENSION_PREFIXES,
  EVENT_COLUMNS,
} from "../../src/lib/dimensions";
import { rawConnection } from "../support/node/database";

/**
 * The SQL routines are source files (src/db/routines/<name>.sql); the migrations hold copies of
 * them. These hold the files, the migrations, the migrated database and the TypeScript lists the
 * routines spell again to one another.
 */

let files: RoutineFile[] = [];
let migrations: Migration[] = [];

beforeAll(async () => {
  [files, migrations] = await Promise.all([readRoutineFiles(), readMigrations()]);
});

function routine(name: string): string {
  const file = files.find((candidate) => candidate.name === name);
  if (file === undefined) throw new Error(`no src/db/routines/${name}.sql`);
  return file.text;
}

describe("routine files", () => {
  it("each defines the function it is named after, and nothing else", () => {
    expect(files.length).toBeGreaterThan(0);
    expect(files.map((file) => ({ name: file.name, problems: routineFileProblems(file) }))).toEqual(
      files.map((file) => ({ name: file.name, problems: [] })),
    );
  });

  it("each is its function's latest copy in drizzle/ (else: npm run db:routines -- --name <what_changed>)", () => {
    expect(routineDifferences(files, latestCopies(migrations))).toEqual([]);
  });

  it("are the functions of the migrated database, no more and no fewer", async () => {
    const client = await rawConnection();
    try {
      const result = await client.query<{ name: string }>(
        `SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = 'public' AND p.prokind = 'f' ORDER BY 1`,
      );
      const inDatabase = result.rows.map((row) => row.name);
      const withFile = files.map((file) => file.name);
      expect({
        withoutFile: inDatabase.filter((name) => !withFile.includes(name)),
        notInDatabase: withFile.filter((name) => !inDatabase.includes(name)),
      }).toEqual({ withoutFile: [], notInDatabase: [] });
    } finally {
      await client.end();
    }
  });
});

describe("dimension lists spelled in SQL and in src/lib/dimensions.ts", () => {
  it("session_dimensions: dimensions are BREAKDOWN_DIMENSIONS", () => {
    expect(declaredTextArray(routine("session_dimensions"), "dimensions")).toEqual([...BREAKDOWN_DIMENSIONS]);
  });

  it("session_dimensions: prefixes are DIMENSION_PREFIXES, NULL where a dimension has none", () => {
    expect(declaredTextArray(routine("session_dimensions"), "prefixes")).toEqual(
      BREAKDOWN_DIMENSIONS.map((dimension) => DIMENSION_PREFIXES[dimension] ?? null),
    );
  });

  it("refresh_catalogue: the columns it catalogues are EVENT_COLUMNS, in order", () => {
    expect(declaredTextArray(routine("refresh_catalogue"), "catalogue_columns")).toEqual([...EVENT_COLUMNS]);
  });

  it("refresh_event_rollups: dimensions are CHART_ROLLUP_COLUMNS", () => {
    expect(declaredTextArray(routine("refresh_event_rollups"), "dimensions")).toEqual([
      ...CHART_ROLLUP_COLUMNS,
    ]);
  });

  it("refresh_event_pair_rollups: pair_dimensions are CHART_PAIR_COLUMNS", () => {
    expect(declaredTextArray(routine("refresh_event_pair_rollups"), "pair_dimensions")).toEqual([
      ...CHART_PAIR_COLUMNS,
    ]);
  });

  it("refresh_event_bits: bit_dimensions are CHART_PAIR_COLUMNS", () => {
    expect(declaredTextArray(routine("refresh_event_bits"), "bit_dimensions")).toEqual([
      ...CHART_PAIR_COLUMNS,
    ]);
  });
});

describe("finding a routine's latest copy", () => {
  const define = (name: string, body = "SELECT 1") =>
    `CREATE OR REPLACE FUNCTION ${name}() RETURNS integer LANGUAGE sql AS $fn$ ${body} $fn$;`;
  const migration = (tag: string, ...statements: string[]): Migration => ({
    tag,
    sql: statements.join("\n--> statement-breakpoint\n"),
  });

  it("takes the last statement that defines the name, its comments included", () => {
    const copies = latestCopies([
      migration("0001_a", define("f"), "CREATE TABLE t (id int);"),
      migration("0002_b", `-- f, faster\n${define("f", "SELECT 2")}`),
    ]);
    expect(copies.get("f")).toEqual({ tag: "0002_b", text: `-- f, faster\n${define("f", "SELECT 2")}` });
  });

  it("follows renames: the old name's body moves to the new name, the old name starts afresh", () => {
    const copies = latestCopies([
      migration("0001_a", define("refresh")),
      migration("0002_b", "ALTER FUNCTION refresh() RENAME TO refresh_part;", define("refresh", "SELECT 3")),
    ]);
    expect(copies.get("refresh_part")).toEqual({ tag: "0001_a", text: define("refresh") });
    expect(copies.get("refresh")).toEqual({ tag: "0002_b", text: define("refresh", "SELECT 3") });
  });

  it("forgets dropped functions, and reads no names in comments, strings or bodies", () => {
    expect(functionChanges("-- CREATE FUNCTION a()\nSELECT 'CREATE FUNCTION b()';")).toEqual([]);
    expect(functionChanges(define("c", "CREATE FUNCTION d() ..."))).toEqual([{ kind: "define", name: "c" }]);
    const copies = latestCopies([
      migration("0001_a", define("e"), define("f"), "DROP FUNCTION IF EXISTS e(int);"),
    ]);
    expect([...copies.keys()]).toEqual(["f"]);
  });

  it("a restating migration makes its routines current; any other edit makes them differ", () => {
    const edited: RoutineFile = { name: "f", text: `-- Why f is so.\n${define("f", "SELECT 4")}\n` };
    const history = [migration("0001_a", define("f"))];
    expect(routineDifferences([edited], latestCopies(history))).toEqual([{ name: "f", copyTag: "0001_a" }]);
    expect(routineDifferences([edited], latestCopies([]))).toEqual([{ name: "f", copyTag: null }]);
    const restated = [...history, { tag: "0002_b", sql: restatingMigration([edited]) }];
    expect(routineDifferences([edited], latestCopies(restated))).toEqual([]);
  });
});
