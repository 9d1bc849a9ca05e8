/**
 * Checks that every command docs/deploy.md tells an operator to run still exists: each
 * `npm run <script>` is a script of package.json, each `npx wrangler <command>` answers
 * `--help` (offline). Run by `.ci/run`; exits 1 naming the commands that are gone.
 *
 *   npx tsx scripts/ci/check-deploy-guide.ts
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const run = promisify(execFile);

/** The commands of the guide's shell blocks and of its inline code. */
function guideCommands(markdown: string): { npm: string[]; wrangler: string[] } {
  const npm = new Set<string>();
  const wrangler = new Set<string>();
  for (const match of markdown.matchAll(/npm run ([a-z][a-z0-9:-]*)/g)) npm.add(match[1] as string);
  // The command words after `wrangler`, up to the first argument, flag or placeholder.
  for (const match of markdown.matchAll(/npx wrangler((?: [a-z][a-z-]*)+)/g)) {
    wrangler.add((match[1] as string).trim());
  }
  return { npm: [...npm].sort(), wrangler: [...wrangler].sort() };
}

async function main(): Promise<void> {
  const guide = await readFile(path.join(ROOT, "docs/deploy.md"), "utf8");
  const scripts = (
    JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const { npm, wrangler } = guideCommands(guide);
  const missing = npm.filter((name) => !(name in scripts)).map((name) => `npm run ${name}`);
  for (const command of wrangler) {
    const words = command.split(" ");
    try {
      await run(path.join(ROOT, "node_modules/.bin/wrangler"), [...words, "--help"], { cwd: ROOT });
    } catch {
      missing.push(`npx wrangler ${command}`);
    }
  }
  if (missing.length > 0) {
    process.stderr.write(`docs/deploy.md names commands that do not exist:\n  ${missing.join("\n  ")}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(
    `docs/deploy.md: ${npm.length} npm scripts and ${wrangler.length} wrangler commands exist\n`,
  );
}

await main();
