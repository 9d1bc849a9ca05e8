import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every repository path that the documentation, a code comment or a SQL routine names exists: a
 * file moved without its mentions leaves a reader following a path to nowhere.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Where mentions are read: prose and the sources that point at each other. */
const READ = ["README.md", "docs", "src", "scripts", "test", ".ci", "dashboard/src", "client/index.ts"];
const READ_ENDINGS = [".md", ".ts", ".sql", ".jsonc", ""];
const SKIP = new Set(["node_modules", "meta"]);

/**
 * A repository path: a top-level folder of ours, then a file with an extension we keep. A URL path
 * (`/docs/scalar-api-reference.js`) starts with a slash and is not one; `./src/…`, `../src/…` are.
 */
const MENTION =
  /(?<![\w-])(?<!(?:^|[^.])\/)(?:src|scripts|test|docs|drizzle|dashboard|client)\/[A-Za-z0-9_./-]+\.(?:ts|sql|md|json|js|css|html|png)\b/g;

function filesUnder(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [entry];
  return readdirSync(full).flatMap((name) =>
    SKIP.has(name) ? [] : filesUnder(path.join(entry, name)).filter((file) => file.length > 0),
  );
}

const sources = READ.flatMap(filesUnder).filter((file) =>
  READ_ENDINGS.some((ending) => (ending === "" ? file.startsWith(".ci/") : file.endsWith(ending))),
);

describe("paths named in documentation and comments", () => {
  it("reads the documentation and the sources", () => {
    expect(sources).toContain("README.md");
    expect(sources.some((file) => file.startsWith("docs/"))).toBe(true);
    expect(sources.some((file) => file.startsWith("src/db/routines/"))).toBe(true);
  });

  it("names only paths that exist", () => {
    const missing: string[] = [];
    for (const file of sources) {
      const text = readFileSync(path.join(ROOT, file), "utf8");
      for (const [mention] of text.matchAll(MENTION)) {
        if (!existsSync(path.join(ROOT, mention))) missing.push(`${file}: ${mention}`);
      }
    }
    expect([...new Set(missing)]).toEqual([]);
  });
});
