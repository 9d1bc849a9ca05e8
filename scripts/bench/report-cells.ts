import { caseId, type Endpoint, type WindowDays } from "./cases";
import { fmtMs, type TimingSummary } from "./measure";
import type { BenchResults, CellResult } from "./results";

/** Formatting and cell look-ups shared by the report's sections (report.ts, report-issue15.ts). */

export const fmtInt = (n: number): string => Math.round(n).toLocaleString("en-US");

/** Text inside a Markdown table cell: a `|` would end the cell. */
export const mdCell = (text: string): string => text.replaceAll("|", "\\|");

export function errorsText(summary: TimingSummary | undefined): string {
  if (!summary) return "";
  const parts = Object.entries(summary.errors).map(([reason, count]) => `${count}× ${reason}`);
  return parts.join("; ");
}

/** Baseline p50 / our uncached p50; a timed-out baseline gives a lower bound (timeout / ours). */
export function ratio(cell: CellResult | undefined): number | undefined {
  const base = cell?.baseline?.p50 ?? cell?.baselineTimeoutMs;
  const ours = cell?.uncached?.p50;
  if (base === undefined || ours === undefined || ours <= 0) return undefined;
  return base / ours;
}

export const fmtFactor = (r: number): string =>
  r >= 100 ? `${Math.round(r)}×` : r >= 10 ? `${r.toFixed(0)}×` : `${r.toFixed(1)}×`;

export function fmtRatio(r: number | undefined, cell?: CellResult): string {
  if (r === undefined) return "–";
  return cell?.baseline?.p50 === undefined && cell?.baselineTimeoutMs !== undefined
    ? `≥ ${fmtFactor(r)}`
    : fmtFactor(r);
}

const fmtBaseline = (cell: CellResult, value: number | undefined): string =>
  value === undefined && cell.baselineTimeoutMs !== undefined
    ? `> ${fmtMs(cell.baselineTimeoutMs)}`
    : fmtMs(value);

export interface Verdict {
  what: string;
  target: string;
  measured: string;
  met: boolean | undefined;
  /** Issue 15's growth column (only with --compare). */
  growth?: string;
}

export const metText = (met: boolean | undefined): string =>
  met === undefined ? "–" : met ? "met" : "**missed**";

/** One measured cell, with how a verdict names it. */
export interface CellRef {
  key: string;
  where: string;
}

export interface Extreme {
  value: number;
  where: string;
}

/** One cell, named `/browser 30d` plus `name` (the filter, as the caller writes it). */
export const caseRefName = (
  filterId: string,
  endpoint: Endpoint,
  days: WindowDays | undefined,
  name: string,
): CellRef => ({
  key: caseId(filterId, endpoint, days),
  where: `${endpoint.label}${days !== undefined ? ` ${days}d` : ""}${name}`,
});

/** The cells of filters × endpoints × windows, named `/browser 30d` plus the filter's name. */
export function cellRefs(
  filters: readonly { id: string; name: string }[],
  endpoints: readonly Endpoint[],
  windows: readonly (WindowDays | undefined)[],
): CellRef[] {
  const refs: CellRef[] = [];
  for (const filter of filters) {
    for (const endpoint of endpoints) {
      for (const days of windows) refs.push(caseRefName(filter.id, endpoint, days, filter.name));
    }
  }
  return refs;
}

/** The largest (or smallest) value over the cells, with the cell it came from. */
export function extreme(
  results: BenchResults,
  refs: readonly CellRef[],
  pick: (cell: CellResult) => number | undefined,
  largest = true,
): Extreme | undefined {
  let best: Extreme | undefined;
  for (const ref of refs) {
    const cell = results.cells.get(ref.key);
    const value = cell ? pick(cell) : undefined;
    if (value === undefined) continue;
    if (!best || (largest ? value > best.value : value < best.value)) best = { value, where: ref.where };
  }
  return best;
}

/** Cells without any successful uncached run (no target is met there). */
export function failedCells(results: BenchResults, refs: readonly CellRef[]): string[] {
  return refs.filter((ref) => results.cells.get(ref.key)?.uncached?.n === 0).map((ref) => ref.where);
}

/** "12.0 ms (worst: /browser 30d)", or "not measured". */
export const atWorst = (x: Extreme | undefined, fmt: (n: number) => string, word = "worst"): string =>
  x ? `${fmt(x.value)} (${word}: ${x.where})` : "not measured";

/** A verdict on the extreme value: missed where a cell failed, undecided where nothing was measured. */
export const judge = (
  x: Extreme | undefined,
  ok: (n: number) => boolean,
  failed: readonly string[] = [],
): boolean | undefined => (failed.length > 0 ? false : x ? ok(x.value) : undefined);

/** The "Every measurement" table of one filter: a row per endpoint and window measured. */
export function cellsTable(
  results: BenchResults,
  title: string,
  filterId: string,
  endpoints: readonly Endpoint[],
  windows: readonly WindowDays[],
): string[] {
  const lines = [
    `### ${title}`,
    "",
    "| endpoint | window | uncached p50 | uncached p95 | cached p50 | cached p95 | baseline p50 | " +
      "baseline p95 | speed-up | runs (ours / cached / baseline) | notes |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|",
  ];
  let any = false;
  for (const endpoint of endpoints) {
    const rows: readonly (WindowDays | undefined)[] = endpoint.windowed ? windows : [undefined];
    if (!endpoint.windowed && filterId !== "none") continue;
    for (const days of rows) {
      const cell = results.cells.get(caseId(filterId, endpoint, days));
      if (!cell) continue;
      any = true;
      const notes: string[] = [];
      const uncachedErrors = errorsText(cell.uncached);
      if (uncachedErrors) notes.push(`ours: ${uncachedErrors}`);
      const cachedErrors = errorsText(cell.cached);
      if (cachedErrors) notes.push(`cached: ${cachedErrors}`);
      if (cell.cached && cell.cached.misses > 0) notes.push(`${cell.cached.misses} cache misses`);
      const baselineErrors = errorsText(cell.baseline);
      if (baselineErrors) notes.push(`baseline: ${baselineErrors}`);
      if (cell.approximate?.length) notes.push(`approximate: ${cell.approximate.join(", ")}`);
      if (filterId !== "none" && cell.sessions !== undefined) notes.push(`${fmtInt(cell.sessions)} sessions`);
      const runs = [cell.uncached?.n, endpoint.cached ? cell.cached?.n : undefined, cell.baseline?.n]
        .map((n) => (n === undefined ? "–" : String(n)))
        .join(" / ");
      lines.push(
        `| ${endpoint.label} | ${days === undefined ? "last 5 min" : `${days}d`} | ` +
          `${fmtMs(cell.uncached?.p50)} | ` +
          `${fmtMs(cell.uncached?.p95)} | ${endpoint.cached ? fmtMs(cell.cached?.p50) : "n/a"} | ` +
          `${endpoint.cached ? fmtMs(cell.cached?.p95) : "n/a"} | ` +
          `${fmtBaseline(cell, cell.baseline?.p50)} | ` +
          `${fmtBaseline(cell, cell.baseline?.p95)} | ${fmtRatio(ratio(cell), cell)} | ${runs} | ` +
          `${mdCell(notes.join("; "))} |`,
      );
    }
  }
  if (!any) lines.push("| (not measured) | | | | | | | | | | |");
  lines.push("");
  return lines;
}
