import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";

/**
 * The route tables of docs/api.md and the README are written by hand; this holds them to
 * /openapi.json, which is generated from the routes (no database needed): every operation has a
 * row, every row a real operation.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const INSIGHTS = "/insights/{projectId}";

/** The paths a row's first cell names: `GET /x`, and the `/y` after it short for /insights/{projectId}/y. */
function rowPaths(row: string): string[] {
  const cell = row.split("|")[1] ?? "";
  return [...cell.matchAll(/`(?:GET )?(\/[^`]*)`/g)].map(([, found]) => {
    const named = found ?? "";
    return named.startsWith("/insights") || !cell.includes(INSIGHTS) ? named : `${INSIGHTS}${named}`;
  });
}

/** A row's path names the operation's, or ends in `…` and names every path under it. */
const covers = (documented: string, operation: string) =>
  documented === operation ||
  (documented.endsWith("…") && operation.startsWith(documented.replace(/\/?…$/, "")));

describe.each(["docs/api.md", "README.md"])("the route table of %s against /openapi.json", (file) => {
  it("has a row for every operation, and no row for one that does not exist", async () => {
    const markdown = readFileSync(path.join(ROOT, file), "utf8");
    vi.spyOn(console, "log").mockImplementation(() => {});
    const response = await createApp().request("http://localhost/openapi.json", {}, {});
    const operations = Object.keys(((await response.json()) as { paths: object }).paths);
    const documented = markdown
      .split("\n")
      .filter((line) => line.startsWith("| `GET /"))
      .flatMap(rowPaths);
    expect(operations.filter((operation) => !documented.some((row) => covers(row, operation)))).toEqual([]);
    // Served outside the document: the dashboard (static assets), the document, its reference.
    const outside = new Set(["/", "/openapi.json", "/docs"]);
    const unknown = documented.filter(
      (row) => !outside.has(row) && !operations.some((operation) => covers(row, operation)),
    );
    expect(unknown).toEqual([]);
    expect(operations.length).toBeGreaterThan(30);
  });
});
