import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, inject, it } from "vitest";

/**
 * The README's block of example requests, run as written in plain `sh` (dash on Debian) against
 * the end-to-end Worker (test/support/browser/global-setup.ts) on the seeded demo project: every
 * command must answer 200 with data. Only `BASE` is pointed at the test's server, and `curl` is
 * wrapped to keep each answer for the checks.
 */

const run = promisify(execFile);
const README = readFileSync(path.resolve("README.md"), "utf8");
const BLOCK_START = "One example of each route OpenPanel";
const BASE_LINE = "BASE=http://127.0.0.1:8787";

function examplesBlock(): string {
  const from = README.indexOf(BLOCK_START);
  const open = README.indexOf("```sh\n", from);
  const close = README.indexOf("\n```", open + 6);
  expect(from).toBeGreaterThan(0);
  return README.slice(open + 6, close + 1);
}

/** True when an answer holds something: a non-empty list, a non-zero number, some text. */
function hasData(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === "object") return Object.values(value).some(hasData);
  if (typeof value === "number") return value !== 0;
  if (typeof value === "string") return value !== "";
  return value === true;
}

const out = mkdtempSync(path.join(os.tmpdir(), "readme-examples-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the README's examples", () => {
  it("run in sh, every request answering 200 with data from the demo project", async () => {
    const block = examplesBlock();
    expect(block).toContain(BASE_LINE);
    const commands = block.split("\n").filter((line) => line.includes("curl ")).length;
    // Each call gets a number from a file (a `$(…)` runs in a subshell, so no shell variable can
    // count), and its status line and body are kept under it.
    const wrapper = `curl() {
  n=$(( $(cat "$OUT/count") + 1 )); echo "$n" > "$OUT/count"
  command curl -w "%{stderr}$n %{http_code}\\n" "$@" | tee "$OUT/$n.body"
}
echo 0 > "$OUT/count"
`;
    const script = wrapper + block.replace(BASE_LINE, `BASE=${inject("e2eBase")}`);
    const { stderr } = await run("sh", ["-e", "-c", script], { env: { ...process.env, OUT: out } });

    const statuses = stderr
      .split("\n")
      .filter((line) => /^\d+ \d{3}$/.test(line))
      .map((line) => line.split(" "));
    expect(statuses).toHaveLength(commands);
    expect(statuses.filter(([, status]) => status !== "200")).toEqual([]);

    const bodies = readdirSync(out).filter((file) => file.endsWith(".body"));
    expect(bodies).toHaveLength(commands);
    for (const file of bodies) {
      const text = readFileSync(path.join(out, file), "utf8");
      // `curl -si` prints the headers first.
      const body = text.startsWith("HTTP/") ? text.slice(text.indexOf("\r\n\r\n") + 4) : text;
      expect(hasData(JSON.parse(body)), `${file}: ${body.slice(0, 200)}`).toBe(true);
    }
  });
});
