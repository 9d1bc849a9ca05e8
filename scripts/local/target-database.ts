import path from "node:path";
import { DEFAULT_DATA_DIR, findRunningEmbeddedDatabase, startEmbeddedDatabase } from "./embedded";

export interface TargetDatabase {
  url: string;
  /** `DATABASE_URL`; the embedded database started for this script; or one another process serves. */
  source: "DATABASE_URL" | "embedded" | "running-embedded";
  /** For messages: the URL without its password, or where the embedded database lives. */
  label: string;
}

/** `url` without its password (also a `password` query parameter), for logs and messages. */
export function describeTarget(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not WHATWG-parsable (e.g. `postgresql://u:p@/db?host=/run/postgresql`, or key=value form).
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1@").replace(/(password\s*=\s*)[^&\s]+/gi, "$1***");
  }
  parsed.password = "";
  for (const key of [...parsed.searchParams.keys()]) {
    if (/^(password|sslpassword)$/i.test(key)) parsed.searchParams.set(key, "***");
  }
  return parsed.toString();
}

function embeddedLabel(url: string, note: string): string {
  return `embedded database in ${path.relative(process.cwd(), DEFAULT_DATA_DIR) || "."} (${describeTarget(url)}, ${note})`;
}

/**
 * Runs `fn` against `DATABASE_URL` when it is set; otherwise against the embedded database in
 * `.data/pglite`: the one a running `npm run dev` serves, or one started for the duration of `fn`
 * (closed afterwards, also on Ctrl-C, so its data is persisted).
 */
export async function withTargetDatabase<T>(
  fn: (url: string, target: TargetDatabase) => Promise<T>,
): Promise<T> {
  const fromEnv = process.env.DATABASE_URL?.trim();
  if (fromEnv) return fn(fromEnv, { url: fromEnv, source: "DATABASE_URL", label: describeTarget(fromEnv) });

  const running = await findRunningEmbeddedDatabase();
  if (running) {
    const label = embeddedLabel(running.url, `served by process ${running.pid}`);
    return fn(running.url, { url: running.url, source: "running-embedded", label });
  }

  const db = await startEmbeddedDatabase({});
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${signal}: closing the embedded database…\n`);
    void db.close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await fn(db.url, {
      url: db.url,
      source: "embedded",
      label: embeddedLabel(db.url, "started for this command"),
    });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (!stopping) await db.close();
  }
}
