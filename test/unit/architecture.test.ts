import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The layering of src/ as docs/architecture.md draws it, checked on the code's own imports:
 * routes → middleware / queries → schemas / lib → db, no import circle, no import from a lower
 * layer to a higher one, and no framework in the layers below the middleware.
 */

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");

/** Each folder (or top-level file) of src/ and its floor: a file may import only from lower floors or its own folder. */
const FLOORS: Record<string, number> = {
  "index.ts": 7,
  "app.ts": 6,
  routes: 5,
  "scheduled.ts": 4,
  middleware: 4,
  queries: 3,
  "env.ts": 2,
  schemas: 2,
  lib: 1,
  "durable-objects": 1,
  db: 0,
};

/** Folders whose files must run without Hono: the queries and everything below them. */
const FRAMEWORK_FREE = ["queries", "schemas", "lib", "db"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [full] : [];
  });
}

const files = sourceFiles(SRC);
const relative = (file: string) => path.relative(SRC, file);
const roomOf = (file: string) => relative(file).split(path.sep)[0] ?? "";

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']/gm;

/** The modules a file imports: relative ones resolved to src files, packages by name. */
function importsOf(file: string): { local: string[]; packages: string[] } {
  const text = readFileSync(file, "utf8");
  const local: string[] = [];
  const packages: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? "";
    if (!specifier.startsWith(".")) {
      packages.push(specifier);
      continue;
    }
    const target = path.resolve(path.dirname(file), specifier);
    const candidates = [`${target}.ts`, path.join(target, "index.ts"), target];
    const found = candidates.find((candidate) => files.includes(candidate));
    if (found) local.push(found);
  }
  return { local, packages };
}

const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe("the layers of src/", () => {
  it("places every file in a layer", () => {
    expect(files.map(roomOf).filter((room) => FLOORS[room] === undefined)).toEqual([]);
  });

  it("imports only from lower layers or from its own folder", () => {
    const upward: string[] = [];
    for (const [file, { local }] of graph) {
      for (const target of local) {
        const from = roomOf(file);
        const to = roomOf(target);
        if (from !== to && (FLOORS[to] ?? 0) >= (FLOORS[from] ?? 0)) {
          upward.push(`${relative(file)} -> ${relative(target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it("has no import circle", () => {
    const circles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "visiting") {
        circles.push([...trail.slice(trail.indexOf(file)), file].map(relative).join(" -> "));
        return;
      }
      state.set(file, "visiting");
      for (const target of graph.get(file)?.local ?? []) visit(target, [...trail, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(circles).toEqual([]);
  });

  it("keeps Hono out of the queries and the layers below them", () => {
    const framework = [...graph]
      .filter(([file]) => FRAMEWORK_FREE.includes(roomOf(file)))
      .flatMap(([file, { packages }]) =>
        packages
          .filter((name) => name === "hono" || name.startsWith("hono/"))
          .map((name) => `${relative(file)}: ${name}`),
      );
    expect(framework).toEqual([]);
  });

  it("keeps every hand-written file short enough to read in one sitting", () => {
    const long = files
      .map((file) => ({ file: relative(file), lines: readFileSync(file, "utf8").split("\n").length }))
      .filter(({ lines }) => lines > 500);
    expect(long).toEqual([]);
  });
});
