/**
 * `npm run fuzz`: seeded hostile requests (scripts/fuzz/requests.ts) against the Worker under
 * `wrangler dev`, through the relay, on a throwaway database of its own on the local Postgres.
 * Prints the status histogram and every unacceptable answer (a 5xx that is not a deliberate 503,
 * an error that is not problem+json, an error that shows SQL or a stack), writes them to a report,
 * and exits 1 if there was any.
 *
 *   npm run fuzz -- [--requests 100000] [--seed 20261125] [--concurrency 16] [--out scripts/fuzz/REPORT.md]
 *
 * environment: TEST_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres); without a
 * reachable Postgres it runs on an embedded one, as the tests do.
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { hashSecret } from "../../src/lib/secrets";
import { startBenchServer } from "../bench/server";
import { migrateDatabase } from "../db/apply-migrations";
import { createScratchDatabase } from "../db/scratch-database";
import { type FuzzRequest, fuzzRequest, fuzzVerdict, requestSize } from "./requests";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "100000" },
    seed: { type: "string", default: "20261125" },
    concurrency: { type: "string", default: "16" },
    out: { type: "string", default: "scripts/fuzz/REPORT.md" },
  },
});
const REQUESTS = Number(values.requests);
const SEED = Number(values.seed);
const CONCURRENCY = Number(values.concurrency);

interface Failure {
  index: number;
  status: number;
  verdict: string;
  request: FuzzRequest;
}

/** A fresh database with one project, a read client and a few hundred events of it, derived. */
async function prepareDatabase() {
  const scratch = await createScratchDatabase("fuzz");
  const url = new URL(scratch.url);
  await migrateDatabase(url.toString());
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const projectId = "fuzz";
  const clientId = crypto.randomUUID();
  const secret = `sec_${crypto.randomUUID()}`;
  await client.query("INSERT INTO organizations (id, name) VALUES ('fuzz-org', 'Fuzz')");
  await client.query("INSERT INTO projects (id, organization_id, name) VALUES ($1, 'fuzz-org', 'Fuzz')", [
    projectId,
  ]);
  await client.query(
    "INSERT INTO clients (id, name, type, organization_id, project_id, secret_hash) VALUES ($1, 'fuzz', 'read', 'fuzz-org', $2, $3)",
    [clientId, projectId, await hashSecret(secret)],
  );
  await client.query(
    `INSERT INTO events (project_id, name, device_id, profile_id, session_id, created_at, path, country, revenue, properties)
     SELECT $1, CASE WHEN i % 10 = 0 THEN 'purchase' ELSE 'screen_view' END, 'd' || (i % 60), 'd' || (i % 60),
       's' || (i % 60), now() - (i % 45) * interval '1 day' - i * interval '1 minute',
       (ARRAY['/', '/pricing', '/docs/start', '=1+1'])[i % 4 + 1], (ARRAY['NO', 'US', NULL])[i % 3 + 1],
       CASE WHEN i % 10 = 0 THEN 1999 ELSE 0 END, jsonb_build_object('plan', CASE WHEN i % 2 = 0 THEN 'pro' ELSE 'free' END, 'amount', i)
     FROM generate_series(1, 300) AS i`,
    [projectId],
  );
  await client.query("SELECT refresh_derived()");
  await client.end();
  return {
    url: url.toString(),
    target: { projectId, client: { id: clientId, secret } },
    drop: scratch.drop,
  };
}

async function main(): Promise<void> {
  const database = await prepareDatabase();
  const server = await startBenchServer(database.url, path.join(os.tmpdir(), "edge-fuzz-wrangler.log"));
  const histogram = new Map<number, number>();
  const failures: Failure[] = [];
  const started = Date.now();
  let next = 0;
  try {
    const worker = async () => {
      for (let index = next++; index < REQUESTS; index = next++) {
        const request = fuzzRequest(SEED, index, database.target);
        let status = 0;
        let verdict: string | undefined;
        try {
          // A request that hangs is a failure of its own, not a stalled run.
          const response = await fetch(`${server.base}${request.path}`, {
            method: request.method,
            headers: request.headers,
            signal: AbortSignal.timeout(30_000),
          });
          const body = await response.text();
          status = response.status;
          verdict = fuzzVerdict(
            status,
            response.headers.get("content-type") ?? "",
            body,
            requestSize(request),
          );
        } catch (error) {
          verdict = `no answer: ${error instanceof Error ? error.message : String(error)}`;
        }
        histogram.set(status, (histogram.get(status) ?? 0) + 1);
        if (verdict) failures.push({ index, status, verdict, request });
        if (index % 10_000 === 0) process.stdout.write(`fuzz: ${index.toLocaleString("en-US")} sent\n`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    await server.stop();
    await database.drop();
  }
  const seconds = (Date.now() - started) / 1000;
  const statuses = [...histogram].sort(([a], [b]) => a - b);
  const lines = [
    "# Fuzz report (`npm run fuzz`, issue 16)",
    "",
    `Run ${new Date(started).toISOString()}: ${REQUESTS.toLocaleString("en-US")} seeded requests (seed ${SEED}, ` +
      `${CONCURRENCY} at a time) through \`wrangler dev\`, the relay and Postgres, on ${os.cpus().length} vCPUs, in ` +
      `${seconds.toFixed(1)} s (${Math.round(REQUESTS / seconds)} requests/s).`,
    "",
    "| status | requests |",
    "|---|--:|",
    ...statuses.map(
      ([status, count]) => `| ${status === 0 ? "no answer" : status} | ${count.toLocaleString("en-US")} |`,
    ),
    "",
    `Unacceptable answers (5xx other than a deliberate 503, errors that are not problem+json or that show SQL, a stack or a connection string): **${failures.length}**.`,
    ...failures
      .slice(0, 50)
      .map(
        (f) =>
          `- #${f.index}: ${f.verdict} (${f.status}) ${f.request.method} \`${f.request.path.slice(0, 200)}\``,
      ),
    "",
  ];
  await writeFile(values.out, lines.join("\n"));
  process.stdout.write(`${lines.join("\n")}\nreport: ${values.out}\n`);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

await main();
