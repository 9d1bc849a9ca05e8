/**
 * Loads deterministic demo traffic.
 *
 *   npm run seed -- --events <n> --days <d> --seed <s> [--reset] [--now <ISO date-time>]
 *
 * Writes into DATABASE_URL, else into the embedded database. `--now` (or SEED_NOW) pins the end
 * of the generated range, so two runs with the same seed give identical rows.
 */
import { migrateDatabase } from "../db/apply-migrations";
import { type SeedOptions, seedDatabase } from "./loader";

interface CliOptions {
  events: number;
  days: number;
  seed: number;
  reset: boolean;
  now: Date;
}

const USAGE =
  "usage: npm run seed -- [--events <n>] [--days <d>] [--seed <s>] [--reset] [--now <ISO date-time>]\n" +
  "defaults: --events 50000 --days 30 --seed 1; --now defaults to SEED_NOW or the current time";

function parseArgs(argv: readonly string[]): CliOptions {
  const options: CliOptions = { events: 50_000, days: 30, seed: 1, reset: false, now: new Date() };
  const seedNow = process.env.SEED_NOW;
  if (seedNow !== undefined && seedNow !== "") options.now = parseDate(seedNow, "SEED_NOW");
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=") ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) fail(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--events":
        options.events = parseInteger(value(), flag, 0);
        break;
      case "--days":
        options.days = parseNumber(value(), flag);
        break;
      case "--seed":
        options.seed = parseInteger(value(), flag, Number.MIN_SAFE_INTEGER);
        break;
      case "--now":
        options.now = parseDate(value(), flag);
        break;
      case "--reset":
        options.reset = true;
        break;
      case "-h":
      case "--help":
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      default:
        fail(`unknown argument ${arg}`);
    }
  }
  return options;
}

function fail(message: string): never {
  process.stderr.write(`seed: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseInteger(text: string, flag: string, min: number): number {
  const n = Number(text.replaceAll("_", ""));
  if (!Number.isSafeInteger(n) || n < min) fail(`${flag} must be an integer${min === 0 ? " ≥ 0" : ""}`);
  return n;
}

function parseNumber(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) fail(`${flag} must be a positive number`);
  return n;
}

function parseDate(text: string, flag: string): Date {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) fail(`${flag} must be an ISO date-time, got ${text}`);
  return date;
}

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");

function progressReporter(): (loaded: number, total: number) => void {
  const tty = process.stderr.isTTY === true;
  let lastTenth = -1;
  let lastDraw = 0;
  let finished = false;
  return (loaded, total) => {
    const share = total > 0 ? loaded / total : 1;
    if (tty) {
      const t = performance.now();
      if (finished || (t - lastDraw < 100 && loaded < total)) return;
      finished = loaded >= total;
      lastDraw = t;
      process.stderr.write(`\rloading events: ${fmt(loaded)} / ${fmt(total)} (${Math.floor(share * 100)} %)`);
      if (loaded >= total) process.stderr.write("\n");
      return;
    }
    const tenth = Math.floor(share * 10);
    if (tenth > lastTenth) {
      lastTenth = tenth;
      process.stderr.write(`loading events: ${fmt(loaded)} / ${fmt(total)} (${tenth * 10} %)\n`);
    }
  };
}

async function run(url: string, cli: CliOptions): Promise<void> {
  await migrateDatabase(url);
  const options: SeedOptions = {
    ...cli,
    onProgress: progressReporter(),
    onPhase: (phase) =>
      process.stderr.write(
        phase === "indexes" ? "rebuilding the events indexes…\n" : "deriving sessions (refresh_derived)…\n",
      ),
  };
  process.stderr.write(
    `seeding ${fmt(cli.events)} events over ${cli.days} days up to ${cli.now.toISOString()} (seed ${cli.seed}` +
      `${cli.reset ? ", reset" : ""})\n`,
  );
  const result = await seedDatabase(url, options);
  const seconds = result.millis / 1000;
  const rate = seconds > 0 ? result.events / seconds : result.events;
  process.stdout.write(
    `seeded ${fmt(result.events)} events, ${fmt(result.sessions)} sessions, ${fmt(result.profiles)} profiles ` +
      `in ${seconds.toFixed(1)} s (${fmt(rate)} events/s)\n`,
  );
  const secs = (ms: number | undefined): string => `${((ms ?? 0) / 1000).toFixed(1)} s`;
  const late = result.lateIndexMillis ?? 0;
  process.stderr.write(
    `load ${secs(result.loadMillis)} (of which index rebuild ${secs(result.indexMillis)}), ` +
      `sessions (refresh_derived) ${secs(result.deriveMillis)}` +
      (late > 0
        ? ` (refresh_derived ${secs(result.refreshMillis)}, alongside the other events indexes ${secs(late)})`
        : "") +
      "\n",
  );
}

async function main(): Promise<void> {
  const cli = parseArgs(process.argv.slice(2));
  const url = process.env.DATABASE_URL;
  if (url !== undefined && url !== "") {
    await run(url, cli);
    return;
  }
  const { withTargetDatabase } = await import("../local/target-database");
  await withTargetDatabase((target: string) => run(target, cli));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `\nseed failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
