import type pg from "pg";
import type { BenchFilter } from "./cases";
import {
  apiRequest,
  type BenchWindow,
  baselineQuery,
  benchWindow,
  caseId,
  type Endpoint,
  type WindowDays,
} from "./cases";
import {
  type ApiClient,
  apiGetOk,
  fmtMs,
  measure,
  progress,
  RunFailure,
  summarize,
  type Timing,
} from "./measure";
import type { BenchOptions } from "./options";
import type { BenchResults, CellResult } from "./results";

/** Measuring one cell, ours or the baseline's: shared by the core matrix and the filtered section. */

export function cellOf(
  results: BenchResults,
  filterId: string,
  endpoint: Endpoint,
  days: WindowDays | undefined,
): CellResult {
  const key = caseId(filterId, endpoint, days);
  let cell = results.cells.get(key);
  if (!cell) {
    cell = {};
    results.cells.set(key, cell);
  }
  return cell;
}

export interface MetricsBody {
  metrics?: { unique_visitors?: number; total_sessions?: number };
  meta?: { approximate?: string[] };
}

/** Our side of one cell: uncached runs, then (where cached) one warming request and cache hits. */
export async function measureApiCell(
  client: ApiClient,
  options: BenchOptions,
  endpoint: Endpoint,
  window: BenchWindow | undefined,
  filters: readonly BenchFilter[] | undefined,
  cell: CellResult,
  where: string,
): Promise<MetricsBody | undefined> {
  const request = apiRequest(endpoint, window, filters);
  const uncached = await uncachedRuns(client, options, request, options.runs);
  cell.uncached = summarize(uncached.timing);
  const metrics = noteMetricsAnswer(cell, endpoint, uncached.lastBody);
  if (endpoint.cached && uncached.timing.samples.length > 0) await cachedRuns(client, options, request, cell);
  reportCell(cell, uncached.timing, where);
  return metrics;
}

/** `runs` uncached requests of one cell (within the run budget), and the last answer's body. */
export async function uncachedRuns(
  client: ApiClient,
  options: BenchOptions,
  request: string,
  runs: number,
): Promise<{ timing: Timing; lastBody: string | undefined }> {
  let lastBody: string | undefined;
  const timing = await measure(runs, options.budgetSeconds * 1000, async () => {
    lastBody = (await apiGetOk(client, request, true)).body;
  });
  return { timing, lastBody };
}

/** What a /metrics answer says about the cell: how many sessions it kept, and what is approximate. */
export function noteMetricsAnswer(
  cell: CellResult,
  endpoint: Endpoint,
  body: string | undefined,
): MetricsBody | undefined {
  if (endpoint.kind !== "metrics" || body === undefined) return undefined;
  const metrics = JSON.parse(body) as MetricsBody;
  const approximate = metrics.meta?.approximate ?? [];
  if (approximate.length > 0) cell.approximate = approximate;
  const sessions = metrics.metrics?.total_sessions;
  if (typeof sessions === "number") cell.sessions = sessions;
  return metrics;
}

/** One warming request, then the cell's cached runs and how many of them missed the cache. */
export async function cachedRuns(
  client: ApiClient,
  options: BenchOptions,
  request: string,
  cell: CellResult,
): Promise<void> {
  await apiGetOk(client, request, false).catch(() => undefined);
  let misses = 0;
  const cached: Timing = await measure(options.runs, options.budgetSeconds * 1000, async () => {
    const answer = await apiGetOk(client, request, false);
    if (!/\bhit\b/.test(answer.headers.get("cache-status") ?? "")) misses++;
  });
  cell.cached = { ...summarize(cached), misses };
}

/** The progress line of a measured cell. */
export function reportCell(cell: CellResult, uncached: Timing, where: string): void {
  const cachedText = cell.cached ? `, cached ${fmtMs(cell.cached.p50)}` : "";
  const failed =
    Object.keys(uncached.errors).length > 0 ? ` (errors: ${Object.keys(uncached.errors).join(", ")})` : "";
  progress(`  ${where}: uncached ${fmtMs(cell.uncached?.p50)}${cachedText}${failed}`);
}

/**
 * The plain-SQL baselines of a section, on one connection with a statement timeout. An endpoint ×
 * filter whose baseline timed out at a shorter window is not run at longer ones (they would too).
 */
export class BaselineRunner {
  private readonly timedOut = new Map<string, WindowDays>();
  private readonly timeoutMs: number;

  constructor(
    private readonly db: pg.Client,
    private readonly options: BenchOptions,
    private readonly dataEnd: Date,
  ) {
    this.timeoutMs = options.baselineTimeoutSeconds * 1000;
  }

  async begin(): Promise<void> {
    await this.db.query(`SET statement_timeout = ${Math.round(this.timeoutMs)}`);
  }

  async end(): Promise<void> {
    await this.db.query("RESET statement_timeout");
  }

  async run(
    cell: CellResult,
    endpoint: Endpoint,
    window: BenchWindow | undefined,
    filterId: string,
    filters: readonly BenchFilter[] | undefined,
    chartEvent?: string,
  ): Promise<void> {
    const timeoutReason = `timeout ${fmtMs(this.timeoutMs)}`;
    const shorter = this.timedOut.get(`${endpoint.id}|${filterId}`);
    if (shorter !== undefined) {
      cell.baseline = {
        n: 0,
        p50: undefined,
        p95: undefined,
        errors: { [`not run (timed out at ${shorter}d)`]: 1 },
      };
      cell.baselineTimeoutMs = this.timeoutMs;
      return;
    }
    const query = baselineQuery(endpoint, window ?? benchWindow(1, this.dataEnd), filters, chartEvent);
    const timing = await measure(this.options.runs, this.options.budgetSeconds * 1000, async () => {
      try {
        await this.db.query(query.text, query.values);
      } catch (error) {
        const code = (error as { code?: string }).code;
        throw new RunFailure(code === "57014" ? timeoutReason : String(error));
      }
    });
    cell.baseline = summarize(timing);
    if (timing.samples.length === 0 && timing.errors[timeoutReason] !== undefined) {
      cell.baselineTimeoutMs = this.timeoutMs;
      if (window) this.timedOut.set(`${endpoint.id}|${filterId}`, window.days);
    }
    progress(
      `  baseline ${endpoint.label} ${window ? `${window.days}d` : ""} ${filterId}: ${fmtMs(cell.baseline.p50)}`,
    );
  }
}
