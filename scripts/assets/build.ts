/**
 * Builds the Worker's static assets into `public/` (served by Workers Static Assets, `[assets]` in
 * wrangler.toml): the reference dashboard (dashboard/ bundled with esbuild, uPlot included) and
 * the pinned `/docs` renderer (@scalar/api-reference's standalone bundle, at the version in
 * package-lock.json). Nothing is fetched at run time.
 *
 *   npm run build:assets
 *
 * wrangler runs it before `wrangler dev` and `wrangler deploy` (`[build]`); the tests run it in
 * their global setup. `public/` is not committed.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const OUT = path.join(ROOT, "public");
const SCALAR_STANDALONE = "node_modules/@scalar/api-reference/dist/browser/standalone.js";

export async function buildAssets(): Promise<void> {
  // Written in place, never removed first: a running `wrangler dev` watches this folder.
  mkdirSync(path.join(OUT, "docs"), { recursive: true });
  await build({
    entryPoints: { dashboard: path.join(ROOT, "dashboard/src/main.ts") },
    outdir: OUT,
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    sourcemap: true,
    logLevel: "warning",
  });
  // The bundle's CSS (uPlot's) lands in dashboard.css; the page's own styles follow it.
  const bundled = readFileSync(path.join(OUT, "dashboard.css"), "utf8");
  const own = readFileSync(path.join(ROOT, "dashboard/dashboard.css"), "utf8");
  writeFileSync(path.join(OUT, "dashboard.css"), `${bundled}\n${own}`);
  copyFileSync(path.join(ROOT, "dashboard/index.html"), path.join(OUT, "index.html"));
  copyFileSync(path.join(ROOT, SCALAR_STANDALONE), path.join(OUT, "docs", "scalar-api-reference.js"));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildAssets();
  process.stdout.write(`built ${path.relative(ROOT, OUT)}/ (dashboard, docs renderer)\n`);
}
