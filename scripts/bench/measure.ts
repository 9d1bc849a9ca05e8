/**
 * Timing primitives: a measurement takes up to `runs` runs but stops early once it has used its
 * time budget (keeping at least one run), because the plain-SQL baseline over millions of events
 * takes seconds per run and the full matrix would otherwise take hours. Failed runs are counted
 * apart and never enter the percentiles.
 */

export interface Timing {
  /** Milliseconds of the successful runs, in run order. */
  samples: number[];
  /** Failure description → how many runs failed that way. */
  errors: Record<string, number>;
}

export interface TimingSummary {
  n: number;
  p50: number | undefined;
  p95: number | undefined;
  errors: Record<string, number>;
}

export class RunFailure extends Error {}

/** Nearest-rank percentile of the samples (p in 0–100); undefined without samples. */
export function percentile(samples: readonly number[], p: number): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export function summarize(timing: Timing): TimingSummary {
  return {
    n: timing.samples.length,
    p50: percentile(timing.samples, 50),
    p95: percentile(timing.samples, 95),
    errors: timing.errors,
  };
}

export async function measure(
  runs: number,
  budgetMs: number,
  run: () => Promise<void>,
  onFailure?: (reason: string) => void,
): Promise<Timing> {
  const timing: Timing = { samples: [], errors: {} };
  const began = performance.now();
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    try {
      await run();
      timing.samples.push(performance.now() - start);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      timing.errors[reason] = (timing.errors[reason] ?? 0) + 1;
      onFailure?.(reason);
    }
    if (performance.now() - began >= budgetMs) break;
  }
  return timing;
}

export interface ApiClient {
  base: string;
  headers: Record<string, string>;
  /** What the server signs cursors with (BenchServer.cursorSecret). */
  cursorSecret: string;
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: string;
}

const REQUEST_TIMEOUT_MS = 180_000;

/** GET with the client's credentials; the whole body is read, since a client pays for all of it. */
export async function apiGet(client: ApiClient, pathAndQuery: string, noCache: boolean): Promise<ApiAnswer> {
  const headers: Record<string, string> = { ...client.headers };
  if (noCache) headers["Cache-Control"] = "no-cache";
  const response = await fetch(`${client.base}${pathAndQuery}`, {
    headers,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = await response.text();
  return { status: response.status, headers: response.headers, body };
}

/** Like apiGet, but a non-200 answer is a failed run named by its status and problem code. */
export async function apiGetOk(
  client: ApiClient,
  pathAndQuery: string,
  noCache: boolean,
): Promise<ApiAnswer> {
  const answer = await apiGet(client, pathAndQuery, noCache);
  if (answer.status !== 200) {
    let code = "";
    try {
      code = ` ${(JSON.parse(answer.body) as { code?: string }).code ?? ""}`;
    } catch {
      // Not problem+json.
    }
    throw new RunFailure(`HTTP ${answer.status}${code}`.trimEnd());
  }
  return answer;
}

export const fmtMs = (ms: number | undefined): string => {
  if (ms === undefined) return "–";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
};

/** A line of progress on stderr (stdout carries the report). */
export const progress = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
