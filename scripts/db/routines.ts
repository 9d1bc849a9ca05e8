/**
 * Writes a migration restating the SQL routines whose file (src/db/routines/<name>.sql) differs
 * from its latest copy in drizzle/, or with --check only lists them (exit code 1 when there are any).
 *
 *   npm run db:routines -- [--name <migration_name>]
 *   npm run db:routines -- --check
 *
 * drizzle-kit creates the empty migration with its journal and snapshot entries; this fills it with
 * each changed file's text, one statement each. `npm run db:migrate` then applies it.
 */
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { MIGRATIONS_FOLDER } from "./apply-migrations";
import {
  latestCopies,
  type RoutineDifference,
  readMigrations,
  readRoutineFiles,
  restatingMigration,
  routineDifferences,
  routineFileProblems,
} from "./routine-files";

const USAGE = "usage: npm run db:routines -- [--name <migration_name>] | --check";
const ROOT = path.dirname(MIGRATIONS_FOLDER);

class UsageError extends Error {}

function parseOptions(argv: string[]): { check: boolean; name: string | undefined } {
  try {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      options: { check: { type: "boolean" }, name: { type: "string", short: "n" } },
    });
    if (values.name !== undefined && !/^[a-z0-9_]+$/.test(values.name)) {
      throw new UsageError(`--name must be lower-case letters, digits and underscores, not "${values.name}"`);
    }
    return { check: values.check === true, name: values.name };
  } catch (error) {
    throw error instanceof UsageError ? error : new UsageError((error as Error).message);
  }
}

function describe(difference: RoutineDifference): string {
  return difference.copyTag === null
    ? `  ${difference.name} (no migration defines it yet)`
    : `  ${difference.name} (latest copy: drizzle/${difference.copyTag}.sql)`;
}

/** Has drizzle-kit add an empty migration to the journal, and returns its tag. */
async function createEmptyMigration(name: string): Promise<string> {
  const before = new Set((await readMigrations()).map((migration) => migration.tag));
  const args = [
    "drizzle-kit",
    "generate",
    "--custom",
    "--name",
    name,
    "--config",
    "scripts/db/drizzle.config.ts",
  ];
  const result = spawnSync("npx", args, { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`npx ${args.join(" ")} failed (exit code ${result.status})`);
  const added = (await readMigrations()).filter((migration) => !before.has(migration.tag));
  const tag = added[0]?.tag;
  if (tag === undefined || added.length !== 1) {
    throw new Error(`expected drizzle-kit to add one migration to the journal, found ${added.length}`);
  }
  return tag;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const files = await readRoutineFiles();
  const problems = files.flatMap((file) =>
    routineFileProblems(file).map((problem) => `src/db/routines/${file.name}.sql: ${problem}`),
  );
  if (problems.length > 0) throw new Error(problems.join("\n"));

  const differences = routineDifferences(files, latestCopies(await readMigrations()));
  if (differences.length === 0) {
    process.stdout.write(`all ${files.length} routine files match their latest copy in drizzle/\n`);
    return;
  }
  if (options.check) {
    process.stdout.write(
      `routine files that differ from their latest copy in drizzle/:\n${differences.map(describe).join("\n")}\n` +
        "write the migration that restates them: npm run db:routines -- --name <what_changed>\n",
    );
    process.exitCode = 1;
    return;
  }

  const [only] = differences;
  const name = options.name ?? (differences.length === 1 && only ? only.name : "restate_routines");
  const tag = await createEmptyMigration(name);
  const changed = new Set(differences.map((difference) => difference.name));
  await writeFile(
    path.join(MIGRATIONS_FOLDER, `${tag}.sql`),
    restatingMigration(files.filter((file) => changed.has(file.name))),
  );
  process.stdout.write(
    `drizzle/${tag}.sql restates:\n${differences.map(describe).join("\n")}\n` +
      "apply it with npm run db:migrate\n",
  );
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`db:routines: ${message}\n${error instanceof UsageError ? `${USAGE}\n` : ""}`);
  process.exitCode = 1;
});
