/**
 * The SQL routines as source files (src/db/routines/<name>.sql, one `CREATE OR REPLACE FUNCTION`
 * each) against their copies in the migrations: a migration that restates a routine holds the
 * file's text verbatim, so "has this routine changed since its last migration?" is a comparison of
 * texts. Parsing is pure (file texts in, answers out); the two readers at the end load the texts.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MIGRATIONS_FOLDER } from "./apply-migrations";

/** drizzle's separator of the statements of a migration; its migrator runs each piece on its own. */
export const STATEMENT_BREAKPOINT = "--> statement-breakpoint";

export const ROUTINES_FOLDER = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../src/db/routines",
);

export interface Migration {
  /** The journal's tag: the file name without `.sql`. */
  tag: string;
  sql: string;
}

export interface RoutineFile {
  /** The function's name, which is also the file's name without `.sql`. */
  name: string;
  text: string;
}

/** The statement of a migration that last gave a function its body. */
export interface RoutineCopy {
  tag: string;
  text: string;
}

export type FunctionChange =
  | { kind: "define"; name: string }
  | { kind: "rename"; name: string; to: string }
  | { kind: "drop"; name: string };

export interface RoutineDifference {
  name: string;
  /** Where the function's current body was last stated; null when no migration defines it. */
  copyTag: string | null;
}

export function splitStatements(sql: string): string[] {
  return sql.split(STATEMENT_BREAKPOINT);
}

/** Where the comment, string or dollar-quoted body starting at `i` ends (`i` when none starts there). */
function literalEnd(sql: string, i: number): number {
  const pair = sql.slice(i, i + 2);
  if (pair === "--") {
    const newline = sql.indexOf("\n", i);
    return newline === -1 ? sql.length : newline;
  }
  if (pair === "/*") {
    const close = sql.indexOf("*/", i + 2);
    return close === -1 ? sql.length : close + 2;
  }
  if (sql[i] === "'") {
    const backslashes = /[eE]/.test(sql[i - 1] ?? "") && !/\w/.test(sql[i - 2] ?? "");
    for (let j = i + 1; j < sql.length; j++) {
      if (backslashes && sql[j] === "\\") j++;
      else if (sql[j] === "'" && sql[j + 1] === "'") j++;
      else if (sql[j] === "'") return j + 1;
    }
    return sql.length;
  }
  if (sql[i] === "$" && !/[\w$]/.test(sql[i - 1] ?? "")) {
    const tag = /^\$(?:[A-Za-z_]\w*)?\$/.exec(sql.slice(i, i + 64))?.[0];
    if (tag !== undefined) {
      const close = sql.indexOf(tag, i + tag.length);
      return close === -1 ? sql.length : close + tag.length;
    }
  }
  return i;
}

/** The SQL with its comments, string literals and dollar-quoted bodies blanked out. */
export function maskLiterals(sql: string): string {
  let masked = "";
  let i = 0;
  while (i < sql.length) {
    const end = literalEnd(sql, i);
    if (end === i) {
      masked += sql[i];
      i++;
    } else {
      masked += sql.slice(i, end).replace(/[^\n]/g, " ");
      i = end;
    }
  }
  return masked;
}

const NAME = /\s*(?:(?:"public"|public)\s*\.\s*)?("(?:[^"]|"")+"|[A-Za-z_][\w$]*)/y;

/** The function name at `at` (unquoted names fold to lower case) and where it ends. */
function nameAt(sql: string, at: number): { name: string; end: number } | null {
  NAME.lastIndex = at;
  const match = NAME.exec(sql);
  const word = match?.[1];
  if (match === null || word === undefined) return null;
  const name = word.startsWith('"') ? word.slice(1, -1).replaceAll('""', '"') : word.toLowerCase();
  return { name, end: NAME.lastIndex };
}

/** Past the argument list at `at`, if there is one (types such as numeric(10, 2) nest). */
function skipArguments(sql: string, at: number): number {
  let i = at;
  while (/\s/.test(sql[i] ?? "")) i++;
  if (sql[i] !== "(") return at;
  for (let depth = 0; i < sql.length; i++) {
    if (sql[i] === "(") depth++;
    else if (sql[i] === ")" && --depth === 0) return i + 1;
  }
  return sql.length;
}

/**
 * What a statement does to functions, in order: CREATE [OR REPLACE] FUNCTION, ALTER FUNCTION …
 * RENAME TO, DROP FUNCTION. Comments, strings and function bodies are not read.
 */
export function functionChanges(statement: string): FunctionChange[] {
  const sql = maskLiterals(statement);
  const changes: FunctionChange[] = [];
  const verbs = /\b(?:(create)\s+(?:or\s+replace\s+)?|(alter)\s+|(drop)\s+)function\b(\s+if\s+exists\b)?/gi;
  for (const verb of sql.matchAll(verbs)) {
    const target = nameAt(sql, verb.index + verb[0].length);
    if (target === null) continue;
    if (verb[1] !== undefined) {
      if (/^\s*\(/.test(sql.slice(target.end))) changes.push({ kind: "define", name: target.name });
    } else if (verb[2] !== undefined) {
      const rest = sql.slice(skipArguments(sql, target.end));
      const renamed = /^\s*rename\s+to\b/i.exec(rest);
      const to = renamed === null ? null : nameAt(rest, renamed[0].length);
      if (to !== null) changes.push({ kind: "rename", name: target.name, to: to.name });
    } else {
      // DROP FUNCTION [IF EXISTS] a(…), b(…)
      let next: { name: string; end: number } | null = target;
      while (next !== null) {
        changes.push({ kind: "drop", name: next.name });
        const after = skipArguments(sql, next.end);
        const comma = /^\s*,/.exec(sql.slice(after));
        next = comma === null ? null : nameAt(sql, after + comma[0].length);
      }
    }
  }
  return changes;
}

/**
 * The latest copy of every function the migrations leave defined, reading them in journal order
 * statement by statement: a definition replaces the copy, a rename moves it to the new name (the
 * old name then has none until it is defined again), a drop removes it.
 */
export function latestCopies(migrations: readonly Migration[]): Map<string, RoutineCopy> {
  const copies = new Map<string, RoutineCopy>();
  for (const migration of migrations) {
    for (const statement of splitStatements(migration.sql)) {
      for (const change of functionChanges(statement)) {
        if (change.kind === "define") {
          copies.set(change.name, { tag: migration.tag, text: statement.trim() });
          continue;
        }
        const copy = copies.get(change.name);
        copies.delete(change.name);
        if (change.kind === "rename" && copy !== undefined) copies.set(change.to, copy);
      }
    }
  }
  return copies;
}

/** What is wrong with a routine file: it must define its own function, once, and nothing else. */
export function routineFileProblems(file: RoutineFile): string[] {
  const problems: string[] = [];
  if (file.text.includes(STATEMENT_BREAKPOINT)) {
    problems.push(`contains "${STATEMENT_BREAKPOINT}", which would split it in a migration`);
  }
  const changes = functionChanges(file.text);
  const defines = changes.filter((change) => change.kind === "define");
  if (defines.length !== 1 || changes.length !== 1 || defines[0]?.name !== file.name) {
    const found = changes.map((change) => `${change.kind} ${change.name}`).join(", ") || "nothing";
    problems.push(`must hold one CREATE OR REPLACE FUNCTION ${file.name}(…), not: ${found}`);
  }
  return problems;
}

/** The routine files whose text is not their function's latest copy, in the files' order. */
export function routineDifferences(
  files: readonly RoutineFile[],
  copies: ReadonlyMap<string, RoutineCopy>,
): RoutineDifference[] {
  return files.flatMap((file) => {
    const copy = copies.get(file.name);
    if (copy !== undefined && copy.text === file.text.trim()) return [];
    return [{ name: file.name, copyTag: copy?.tag ?? null }];
  });
}

/** A migration restating the routines: each file's text, one statement each. */
export function restatingMigration(files: readonly RoutineFile[]): string {
  return `${files.map((file) => file.text.trim()).join(`\n${STATEMENT_BREAKPOINT}\n`)}\n`;
}

/**
 * The elements of the routine's declaration `<variable> text[] := ARRAY[…]`, string literals or
 * NULL: lists that SQL and TypeScript both spell, read so a test can hold them equal.
 */
export function declaredTextArray(routine: string, variable: string): (string | null)[] {
  const declaration = new RegExp(`\\b${variable}\\s+text\\[\\]\\s*:=\\s*ARRAY\\[([^\\]]*)\\]`, "i").exec(
    maskComments(routine),
  );
  const list = declaration?.[1];
  if (list === undefined) throw new Error(`no declaration "${variable} text[] := ARRAY[…]"`);
  return list.split(",").map((item) => {
    const element = item.trim();
    if (/^null$/i.test(element)) return null;
    if (/^'(?:[^']|'')*'$/.test(element)) return element.slice(1, -1).replaceAll("''", "'");
    throw new Error(`${variable}: "${element}" is neither a string literal nor NULL`);
  });
}

/** The SQL with its `--` comments blanked out (strings kept), for reading declarations. */
function maskComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, (comment) => " ".repeat(comment.length));
}

/** The migrations in journal order. */
export async function readMigrations(folder = MIGRATIONS_FOLDER): Promise<Migration[]> {
  const journal = JSON.parse(await readFile(path.join(folder, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  return Promise.all(
    journal.entries.map(async ({ tag }) => ({
      tag,
      sql: await readFile(path.join(folder, `${tag}.sql`), "utf8"),
    })),
  );
}

/** The routine files, by name. */
export async function readRoutineFiles(folder = ROUTINES_FOLDER): Promise<RoutineFile[]> {
  const names = (await readdir(folder)).filter((file) => file.endsWith(".sql")).sort();
  return Promise.all(
    names.map(async (file) => ({
      name: file.slice(0, -".sql".length),
      text: await readFile(path.join(folder, file), "utf8"),
    })),
  );
}
