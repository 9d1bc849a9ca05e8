import { readFile } from "node:fs/promises";
import { describeFilters } from "./filters";
import { routeCaseId } from "./report-routes";
import type { BenchResults, ComparedCase, ComparedRun } from "./results";

/**
 * The results as JSON beside the report (REPORT.json): case id → timings, plus the data set's
 * facts and the picked filters. A later run over a larger data set reads it with `--compare` to
 * report growth case by case; case ids carry no picked value, so they match across data sets.
 */

const FORMAT = "edge-analytics-bench-results/1";

interface CaseJson {
  p50?: number;
  p95?: number;
  cachedP50?: number;
  cachedP95?: number;
  baselineP50?: number;
  baselineP95?: number;
  filter?: string;
}

interface ResultsJson {
  format: typeof FORMAT;
  startedAt: string;
  finishedAt?: string;
  interrupted?: string;
  options: BenchResults["options"];
  database: string;
  /** The filtered section's rounds, with the machine's two-process probe before each. */
  filteredRounds?: BenchResults["filteredRounds"];
  data?: {
    events: number;
    projectEvents: number;
    projectSessions: number;
    totalEvents: number;
    first: string;
    last: string;
  };
  filters?: {
    window: { startDate: string; endDate: string };
    totalSessions: number;
    cases: Record<string, { filter: string; sessions: number; share: number; outOfRange?: string }>;
    skipped: string[];
  };
  cases: Record<string, CaseJson>;
}

const round = (ms: number | undefined): number | undefined =>
  ms === undefined ? undefined : Math.round(ms * 100) / 100;

/** The filter id of a case id: everything before the endpoint (which starts with `/`). */
export const filterIdOf = (caseId: string): string => caseId.slice(0, Math.max(0, caseId.indexOf(":/")));

export function resultsJson(results: BenchResults): string {
  const filterLabels = new Map(
    (results.picks?.cases ?? []).map((c) => [c.id, describeFilters(c.filters)] as const),
  );
  const cases: Record<string, CaseJson> = {};
  for (const [id, cell] of [...results.cells].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const filter = filterLabels.get(filterIdOf(id));
    cases[id] = {
      p50: round(cell.uncached?.p50),
      p95: round(cell.uncached?.p95),
      cachedP50: round(cell.cached?.p50),
      cachedP95: round(cell.cached?.p95),
      baselineP50: round(cell.baseline?.p50),
      baselineP95: round(cell.baseline?.p95),
      ...(filter ? { filter } : {}),
    };
  }
  // The routes section's cases, under their own prefix (growth across data sets, routesSection).
  for (const route of results.routes ?? []) {
    cases[routeCaseId(route.id)] = {
      p50: round(route.api.p50),
      p95: round(route.api.p95),
      baselineP50: round(route.sql.p50),
    };
  }
  const d = results.data;
  const picks = results.picks;
  const json: ResultsJson = {
    format: FORMAT,
    startedAt: results.startedAt.toISOString(),
    finishedAt: results.finishedAt?.toISOString(),
    interrupted: results.interrupted,
    options: results.options,
    database: results.database,
    filteredRounds: results.filteredRounds,
    data: d && {
      events: results.options.events,
      projectEvents: d.projectEvents,
      projectSessions: d.projectSessions,
      totalEvents: d.totalEvents,
      first: d.first.toISOString(),
      last: d.last.toISOString(),
    },
    filters: picks && {
      window: { startDate: picks.window.startDate, endDate: picks.window.endDate },
      totalSessions: picks.totalSessions,
      cases: Object.fromEntries(
        picks.cases.map((c) => [
          c.id,
          {
            filter: describeFilters(c.filters),
            sessions: c.sessions,
            share: Math.round(c.share * 10_000) / 10_000,
            ...(c.outOfRange ? { outOfRange: c.outOfRange } : {}),
            ...(c.chartEvent ? { chartEvent: c.chartEvent } : {}),
          },
        ]),
      ),
      skipped: picks.skipped,
    },
    cases,
  };
  return inlineShortArrays(JSON.stringify(json, null, 2));
}

/** The repository's formatter (Biome, 110 columns) writes an array of plain values on one line when it fits. */
const FORMATTER_LINE_WIDTH = 110;

function inlineShortArrays(text: string): string {
  return text.replace(
    /^( *)("[^"\n]*": )?\[\n((?: *(?:"[^"\n]*"|-?[\d.e+-]+|true|false|null),?\n)+) *\]/gm,
    (whole, indent: string, key: string | undefined, items: string) => {
      const values = items
        .split("\n")
        .map((line) => line.trim().replace(/,$/, ""))
        .filter((line) => line.length > 0);
      const inline = `${indent}${key ?? ""}[${values.join(", ")}]`;
      return inline.length <= FORMATTER_LINE_WIDTH ? inline : whole;
    },
  );
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

/** An earlier run's REPORT.json; throws with a readable message when it is not one. */
export async function loadComparedRun(file: string): Promise<ComparedRun> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`--compare ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isRecord(parsed) || parsed.format !== FORMAT || !isRecord(parsed.cases)) {
    throw new Error(`--compare ${file}: not the results of a bench run (format ${FORMAT})`);
  }
  const cases = new Map<string, ComparedCase>();
  for (const [id, value] of Object.entries(parsed.cases)) {
    if (!isRecord(value)) continue;
    cases.set(id, {
      p50: num(value.p50),
      p95: num(value.p95),
      cachedP50: num(value.cachedP50),
      baselineP50: num(value.baselineP50),
      filter: typeof value.filter === "string" ? value.filter : undefined,
    });
  }
  const options = isRecord(parsed.options) ? parsed.options : {};
  const data = isRecord(parsed.data) ? parsed.data : {};
  return {
    file,
    startedAt: typeof parsed.startedAt === "string" ? parsed.startedAt : "?",
    events: num(options.events) ?? 0,
    projectEvents: num(data.projectEvents),
    cases,
  };
}
