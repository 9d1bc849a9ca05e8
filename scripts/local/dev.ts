/**
 * Local development server (CONTRACT section 11).
 *
 *   npm run dev                      # embedded database in .data/pglite, Worker on PORT (8787)
 *   DATABASE_URL=postgres://… npm run dev
 *
 * Starts (or uses) the database, migrates it, loads the demo data when the `demo` project is
 * missing, starts the WebSocket relay that stands in for Neon's proxy, and runs `wrangler dev`.
 * Prints `ready: http://127.0.0.1:<port>` once the Worker answers. Ctrl-C stops everything and
 * keeps the embedded database's data.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { migrateDatabase } from "../db/apply-migrations";
import { DEMO_CLIENTS, DEMO_READ_CLIENT, hasDemoProject } from "../seed/demo-fixtures";
import { seedDatabase } from "../seed/loader";
import { DEFAULT_DATA_DIR, type EmbeddedDatabase, startEmbeddedDatabase } from "./embedded";
import { type Relay, startRelay } from "./relay";
import { describeTarget } from "./target-database";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER_BIN = process.platform === "win32" ? "wrangler.cmd" : "wrangler";
const WRANGLER = path.join(ROOT, "node_modules", ".bin", WRANGLER_BIN);
const HOST = "127.0.0.1";
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
/** Variables handed on to the Worker when they are set in this process's environment. */
// DATABASE_REPLICA_URL: a loopback replica is reached through the same relay as DATABASE_URL.
const FORWARDED_VARS = ["RATE_LIMIT_PER_10S", "CORS_ORIGINS", "DATABASE_REPLICA_URL"] as const;

const log = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

class DevError extends Error {}

function parsePort(): number {
  const text = process.env.PORT?.trim() || "8787";
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new DevError(`PORT must be an integer from 1 to 65535, not "${text}"`);
  }
  return port;
}

/** Fails early (and clearly) when something already listens on the port wrangler should use. */
async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new DevError(`port ${port} on ${HOST} is in use; stop what runs there or set PORT`)
          : error,
      ),
    );
    probe.listen(port, HOST, () => probe.close(() => resolve()));
  });
}

function databaseHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    throw new DevError("DATABASE_URL is not a valid postgres:// URL");
  }
}

async function loadDemoDataIfMissing(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let present: boolean;
  let hasEvents = false;
  try {
    present = await hasDemoProject(client);
    if (present) {
      const loaded = await client.query<{ loaded: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM events WHERE project_id = 'demo')
            AND EXISTS (SELECT 1 FROM sessions WHERE project_id = 'demo') AS loaded`,
      );
      hasEvents = loaded.rows[0]?.loaded === true;
    }
  } finally {
    await client.end();
  }
  if (present) {
    log("demo data: present (the demo project exists)");
    if (!hasEvents) {
      log(
        "demo data: the demo project has no events or sessions (an interrupted load?); with this server running,",
      );
      log("           `npm run seed -- --reset` loads them into the same database");
    }
    return;
  }
  log("demo data: loading 50,000 events over 30 days (once)…");
  const began = performance.now();
  const result = await seedDatabase(url, { events: 50_000, days: 30, seed: 1, reset: false });
  log(
    `demo data: ${result.events.toLocaleString("en-US")} events, ${result.sessions.toLocaleString("en-US")} ` +
      `sessions, ${result.profiles.toLocaleString("en-US")} profiles in ${seconds(began)}`,
  );
}

function printCredentials(base: string): void {
  log("");
  log("Demo clients (CONTRACT section 11):");
  for (const demo of DEMO_CLIENTS) {
    const scope =
      demo.projectId !== null ? `project ${demo.projectId}` : `organization ${demo.organizationId}`;
    log(`  ${demo.type.padEnd(5)} ${scope.padEnd(25)} id ${demo.id}  secret ${demo.secret}`);
  }
  const root = DEMO_CLIENTS.find((demo) => demo.type === "root");
  log("");
  log("Try:");
  log(`  curl ${base}/health`);
  const headers = `-H 'openpanel-client-id: ${DEMO_READ_CLIENT.id}' -H 'openpanel-client-secret: ${DEMO_READ_CLIENT.secret}'`;
  log(`  curl ${headers} ${base}/insights/demo/live`);
  log(`  curl ${headers} '${base}/insights/demo/metrics?range=30d'`);
  log(`  curl ${headers} '${base}/export/events?limit=5&includes=geo,device'`);
  if (root) {
    log(`  curl -u '${root.id}:${root.secret}' '${base}/insights/demo-2/pages?range=7d'`);
  }
  log(`  open ${base}/          (the dashboard, signed in as the demo read client)`);
  log(`  open ${base}/docs`);
  log("");
}

/** The parent of `pid` (Linux /proc), or null where that cannot be read. */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …"; comm may contain spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * Calls `onOrphaned` when this process or its parent (tsx's launcher) is re-parented. Killing
 * `npm run dev` by its pid (not its process group) ends npm and its `sh`, but the signal never
 * reaches tsx, and wrangler would keep the port and the database busy.
 */
function watchParents(onOrphaned: () => void): void {
  const parent = process.ppid;
  const grandparent = parentOf(parent);
  const timer = setInterval(() => {
    if (process.ppid !== parent || (grandparent !== null && parentOf(parent) !== grandparent)) {
      clearInterval(timer);
      onOrphaned();
    }
  }, 1_000);
  timer.unref();
}

/** True once the Worker answers GET /health (any status); false when `stopped` settles first. */
async function waitUntilServing(base: string, stopped: Promise<unknown>): Promise<boolean> {
  let done = false;
  void stopped.then(() => {
    done = true;
  });
  const began = performance.now();
  let hinted = false;
  while (!done) {
    try {
      const response = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      return true;
    } catch {
      // Not listening yet (or still bundling).
    }
    if (!hinted && performance.now() - began > 60_000) {
      hinted = true;
      log(`still waiting for ${base}/health to answer…`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

async function main(): Promise<void> {
  const port = parsePort();
  const base = `http://${HOST}:${port}`;
  let embedded: EmbeddedDatabase | undefined;
  let relay: Relay | undefined;
  let wrangler: ChildProcess | undefined;
  let wranglerExit: Promise<number> | undefined;
  let shuttingDown: Promise<never> | undefined;

  const shutdown = (code: number, reason?: string): Promise<never> => {
    shuttingDown ??= (async () => {
      if (reason) log(reason);
      if (wrangler && wranglerExit && wrangler.exitCode === null && wrangler.signalCode === null) {
        wrangler.kill("SIGTERM");
        const timer = setTimeout(() => wrangler?.kill("SIGKILL"), 5_000);
        await wranglerExit;
        clearTimeout(timer);
      }
      await relay?.close().catch(() => undefined);
      if (embedded) {
        await embedded.close().catch((error: unknown) => {
          process.stderr.write(`closing the embedded database failed: ${(error as Error).message}\n`);
        });
      }
      process.exit(code);
    })();
    return shuttingDown;
  };

  let signals = 0;
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      // Ctrl-C reaches this process twice at once (from the terminal and relayed by tsx): only a
      // later one means "don't wait".
      if (performance.now() - firstSignalAt < 1_000) return;
      process.stderr.write(`${signal} again: exiting without waiting\n`);
      process.exit(1);
    }
    firstSignalAt = performance.now();
    void shutdown(
      0,
      `\n${signal}: stopping wrangler, the relay${embedded ? " and the embedded database" : ""}…`,
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  watchParents(() => {
    if (signals === 0) {
      void shutdown(1, "the parent process went away: stopping wrangler, the relay and the database…");
    }
  });

  try {
    await assertPortFree(port);

    // 1. The database.
    let url = process.env.DATABASE_URL?.trim() ?? "";
    if (url !== "") {
      log(`database: ${describeTarget(url)} (DATABASE_URL)`);
    } else {
      const began = performance.now();
      embedded = await startEmbeddedDatabase({ dataDir: DEFAULT_DATA_DIR });
      url = embedded.url;
      log(
        `database: embedded PGlite in ${path.relative(ROOT, DEFAULT_DATA_DIR)}, ${url} (started in ${seconds(began)})`,
      );
    }
    const migrateBegan = performance.now();
    await migrateDatabase(url);
    log(`database: migrated in ${seconds(migrateBegan)}`);
    await loadDemoDataIfMissing(url);

    // 2. The relay standing in for Neon's WebSocket proxy (only loopback databases are reachable).
    const vars: Record<string, string> = { DATABASE_URL: url };
    if (LOOPBACK.has(databaseHost(url))) {
      relay = await startRelay(0, { pooling: embedded === undefined });
      vars.NEON_WS_PROXY = relay.proxy;
      log(`relay: ws://${relay.proxy} (NEON_WS_PROXY)`);
    } else {
      vars.NEON_WS_PROXY = "";
      log(
        `relay: not used; ${databaseHost(url)} is not a loopback host, so the Worker uses Neon's own proxy`,
      );
    }
    for (const key of FORWARDED_VARS) {
      const value = process.env[key];
      if (value !== undefined && value !== "") vars[key] = value;
    }
    // The dashboard at / opens on the demo project with the demo read client (public demo values).
    vars.DASHBOARD_DEMO_CLIENT = JSON.stringify({
      clientId: DEMO_READ_CLIENT.id,
      clientSecret: DEMO_READ_CLIENT.secret,
      projectId: DEMO_READ_CLIENT.projectId,
    });

    // 3. wrangler dev. `--var` beats wrangler.toml and .dev.vars; stdin is not passed on, so
    // Ctrl-C reaches this process (and wrangler) as a signal instead of a keypress.
    const args = ["dev", "--ip", HOST, "--port", String(port), "--show-interactive-dev-session=false"];
    for (const [key, value] of Object.entries(vars)) args.push("--var", `${key}:${value}`);
    printCredentials(base);
    log(`wrangler dev on ${base}…`);
    const child = spawn(WRANGLER, args, {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    });
    wrangler = child;
    wranglerExit = new Promise<number>((resolve) => {
      child.once("error", (error) => {
        process.stderr.write(`could not start wrangler (${WRANGLER}): ${error.message}\n`);
        resolve(1);
      });
      child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
    void wranglerExit.then((code) => {
      if (!shuttingDown) void shutdown(code, `wrangler exited with code ${code}; stopping`);
    });

    if (await waitUntilServing(base, wranglerExit)) log(`ready: ${base}`);
  } catch (error) {
    const detail =
      error instanceof DevError ? error.message : error instanceof Error ? error.stack : String(error);
    process.stderr.write(`dev: ${detail}\n`);
    await shutdown(1);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`dev: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
