import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { randomHex } from "../../src/lib/secrets";
import { type Relay, type RelayOptions, startRelay } from "../local/relay";

/**
 * The Worker under `wrangler dev` with the relay in front of Postgres, as `npm run dev` runs it
 * (scripts/local/dev.ts), but on a free loopback port, with rate limiting off, with its own throwaway
 * local state (so the KV cache starts empty and never mixes with the dev server's), and with
 * wrangler's output in a log file instead of the benchmark's stdout.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER = path.join(
  ROOT,
  "node_modules",
  ".bin",
  process.platform === "win32" ? "wrangler.cmd" : "wrangler",
);
const HOST = "127.0.0.1";
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 5_000;

export interface BenchServer {
  base: string;
  /** The CURSOR_SECRET the Worker signs cursors with, so a benchmark can build a deep cursor. */
  cursorSecret: string;
  stop(): Promise<void>;
}

/** A port nothing listens on right now (the OS picks it; wrangler binds it a moment later). */
async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function tail(file: string, lines: number): Promise<string> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

/**
 * `overrides` replace the Worker vars set here (a soak turns the rate limiter back on); `relayOptions`
 * go to the relay (a simulated distance to the database).
 */
export async function startBenchServer(
  databaseUrl: string,
  logFile: string,
  overrides: Record<string, string> = {},
  relayOptions: RelayOptions = {},
): Promise<BenchServer> {
  const relay: Relay = await startRelay(0, relayOptions);
  const state = await mkdtemp(path.join(os.tmpdir(), "edge-bench-state-"));
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const cursorSecret = randomHex(32);
  const vars: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    NEON_WS_PROXY: relay.proxy,
    // Thousands of requests from one client: the limiter would answer most of them with 429.
    RATE_LIMIT_PER_10S: "0",
    CURSOR_SECRET: cursorSecret,
    ...overrides,
  };
  const args = [
    "dev",
    "--ip",
    HOST,
    "--port",
    String(port),
    "--show-interactive-dev-session=false",
    "--persist-to",
    state,
    // Request lines for every call would only fill the log.
    "--log-level",
    "warn",
  ];
  for (const [key, value] of Object.entries(vars)) args.push("--var", `${key}:${value}`);

  const log = createWriteStream(logFile);
  const child: ChildProcess = spawn(WRANGLER, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<number>((resolve) => {
    child.once("error", (error) => {
      log.write(`could not start wrangler (${WRANGLER}): ${error.message}\n`);
      resolve(1);
    });
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
  let running = true;
  void exited.then(() => {
    running = false;
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (running) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, STOP_TIMEOUT_MS + 2_000))]);
        clearTimeout(timer);
      }
      await Promise.race([relay.close(), new Promise((resolve) => setTimeout(resolve, 2_000))]);
      await rm(state, { recursive: true, force: true }).catch(() => undefined);
      log.end();
    })();
    return stopping;
  };

  // Ready once /health answers 200 (a real query went through the driver, the relay and Postgres).
  const began = performance.now();
  let lastProblem = "no answer yet";
  while (performance.now() - began < READY_TIMEOUT_MS) {
    if (!running) {
      await stop();
      throw new Error(
        `wrangler exited before serving; last lines of ${logFile}:\n${await tail(logFile, 20)}`,
      );
    }
    try {
      const response = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5_000) });
      const body = await response.text();
      if (response.status === 200) return { base, cursorSecret, stop };
      lastProblem = `/health answered ${response.status}: ${body.slice(0, 200)}`;
    } catch {
      // Not listening yet (still bundling).
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`wrangler dev was not ready within ${READY_TIMEOUT_MS / 1000} s (${lastProblem})`);
}
