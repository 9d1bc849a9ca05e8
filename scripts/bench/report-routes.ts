import path from "node:path";
import { fmtMs } from "./measure";
import type { RouteResult } from "./routes";

/**
 * The routes section of the report (issues 17 and 18): each route's timings beside its plain SQL
 * and target, and with `--compare` its growth against an earlier run over another data set.
 */

const fmtCount = (n: number) => n.toLocaleString("en-US");

/** The id a route case has among the cases of the results JSON (growth across data sets). */
export const routeCaseId = (id: string): string => `route:${id}`;

/** What the growth columns need of an earlier run (`--compare`). */
interface EarlierRun {
  file: string;
  startedAt: string;
  events: number;
  cases: ReadonlyMap<string, { p50?: number; baselineP50?: number }>;
}

export function routesSection(
  results: readonly RouteResult[] | undefined,
  skipped: string | undefined,
  baselineTimeoutMs: number,
  compare?: EarlierRun,
): string[] {
  const lines = ["## Routes of issues 17 and 18 (uncached, 30-day window where there is one)", ""];
  if (!results) return [...lines, `Not measured: ${skipped ?? "not run"}.`, ""];
  const growthHeader = compare ? ` p50 at ${fmtCount(compare.events)} events | growth | SQL growth |` : "";
  lines.push(
    `| route | target p50 | p50 | p95 | plain SQL p50 | speed-up | verdict |${growthHeader}`,
    `|---|--:|--:|--:|--:|--:|---|${compare ? "--:|--:|--:|" : ""}`,
  );
  for (const r of results) {
    // A baseline that only failed hit the statement timeout: its speed-up is a lower bound.
    const timedOut = r.sql.p50 === undefined && Object.keys(r.sql.errors).length > 0;
    const speedUp =
      r.api.p50 && r.sql.p50
        ? `${(r.sql.p50 / r.api.p50).toFixed(1)}×`
        : timedOut && r.api.p50
          ? `> ${(baselineTimeoutMs / r.api.p50).toFixed(0)}×`
          : "–";
    const baseline = timedOut ? "> timeout" : fmtMs(r.sql.p50);
    const errors =
      Object.keys(r.api.errors).length > 0 ? ` (errors: ${Object.keys(r.api.errors).join("; ")})` : "";
    const verdict = r.api.p50 === undefined ? "not measured" : r.api.p50 <= r.targetMs ? "met" : "missed";
    const earlier = compare?.cases.get(routeCaseId(r.id));
    const ratio = (now: number | undefined, before: number | undefined) =>
      now !== undefined && before ? `${(now / before).toFixed(2)}×` : "–";
    const growth = compare
      ? ` ${fmtMs(earlier?.p50)} | ${ratio(r.api.p50, earlier?.p50)} | ${ratio(r.sql.p50, earlier?.baselineP50)} |`
      : "";
    lines.push(
      `| ${r.label} | ≤ ${r.targetMs} ms | ${fmtMs(r.api.p50)} | ${fmtMs(r.api.p95)} | ${baseline} | ${speedUp} | ${verdict}${errors} |${growth}`,
    );
  }
  lines.push("");
  if (compare) {
    lines.push(
      `Growth: this run's p50 over the earlier run's (\`${path.basename(compare.file)}\`, ${compare.startedAt}, ` +
        `${fmtCount(compare.events)} events), for our route and for its plain SQL; the labels' picked values may differ between the data sets.`,
      "",
    );
  }
  for (const r of results) if (r.note) lines.push(`- ${r.label}: ${r.note}`);
  if (results.some((r) => r.note)) lines.push("");
  return lines;
}
