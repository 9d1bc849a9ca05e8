import type pg from "pg";
import type { BreakdownDimension } from "../../src/lib/dimensions";
import { BENCH_PROJECT, type BenchFilter, type BenchWindow, CHART_BREAKDOWN } from "./cases";
import {
  type Candidate,
  propertyChartEvent,
  propertyCounts,
  propertyTextCounts,
  TEXT_PREFIX_MAX,
} from "./filter-candidates";

/**
 * The filters the benchmark measures, picked from the data (issue 15): hard-coded values would
 * keep 0 % or 60 % of the sessions of another data set, and a filter's cost depends on how much it
 * keeps. Every pick is deterministic (the same data gives the same filters): the candidate whose
 * share of the 30-day window's sessions is closest to 8 %, within 2–20 %, ties broken by the order
 * of the lists below and then by value. The values never enter case ids, so runs over data sets
 * that pick different values still compare case by case.
 */

/** A filter as the API takes it (contract section 3). */
export type FilterCaseKind =
  | "one"
  | "isNot"
  | "text"
  | "two"
  | "three"
  | "path"
  | "pathText"
  | "origin"
  | "name"
  | "property"
  | "propertyText"
  | "chart"
  | "chartTwo"
  | "chartProperty";

export interface FilterCase {
  /** Part of every case id: the kind (and, for `one`, the dimension), never a value. */
  id: string;
  kind: FilterCaseKind;
  filters: BenchFilter[];
  /** Sessions of the 30-day window it keeps, by the picking queries. */
  sessions: number;
  share: number;
  /** Set when no candidate kept 2–20 %: what was measured instead, and why. */
  outOfRange?: string;
  /** A chart case's series event (`screen_view` unless set). */
  chartEvent?: string;
}

export interface FilterPicks {
  /** The window the shares are of (the bench's 30-day window). */
  window: BenchWindow;
  totalSessions: number;
  cases: FilterCase[];
  /** Dimensions and kinds for which nothing was picked, with the reason. */
  skipped: string[];
  pickSeconds: number;
}

const TARGET = 0.08;
const MIN_SHARE = 0.02;
const MAX_SHARE = 0.2;

/** One `is` filter per dimension (the "one session-attribute filter"). */
export const ONE_DIMENSIONS = [
  "country",
  "device",
  "browser",
  "os",
  "referrer_name",
  "utm_source",
] as const satisfies readonly BreakdownDimension[];
/** `isNot X` keeps 2–20 % only where X holds 80–98 %: the dimensions where one value may dominate. */
const IS_NOT_DIMENSIONS = [
  "device",
  "referrer_type",
  "os",
  "browser",
  "country",
] as const satisfies readonly BreakdownDimension[];
/** Text operators are resolved against a dimension's distinct values: these have tens to hundreds. */
const TEXT_DIMENSIONS = [
  "referrer_name",
  "city",
  "browser",
  "os",
  "utm_campaign",
] as const satisfies readonly BreakdownDimension[];
const PAIRS = [
  ["country", "device"],
  ["browser", "referrer_type"],
  ["os", "referrer_name"],
] as const satisfies readonly (readonly BreakdownDimension[])[];
const TRIPLES = [
  ["country", "device", "browser"],
  ["device", "os", "referrer_type"],
] as const satisfies readonly (readonly BreakdownDimension[])[];
/** Text candidates are the prefixes of a dimension's values (up to TEXT_PREFIX_MAX long), over at most this many values. */
const TEXT_VALUES_MAX = 500;

const inRange = (share: number): boolean => share >= MIN_SHARE && share <= MAX_SHARE;
const pct = (share: number): string => `${(100 * share).toFixed(1)} %`;
/** A plain (non-"not set") value: the API counts NULL and '' alike as not set. */
const isSet = (value: string | null | undefined): value is string =>
  value !== null && value !== undefined && value !== "";

/** The candidate closest to 8 % within 2–20 %, deterministically; undefined when none is in range. */
function closest(candidates: readonly Candidate[], total: number): Candidate | undefined {
  let best: Candidate | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const share = c.sessions / total;
    if (!inRange(share)) continue;
    const distance = Math.abs(share - TARGET);
    const better =
      !best ||
      distance < bestDistance - 1e-12 ||
      (Math.abs(distance - bestDistance) <= 1e-12 &&
        (c.order < best.order || (c.order === best.order && c.tieBreak < best.tieBreak)));
    if (better) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

/** Session counts per value of each column, pair and triple, from one scan of the window's sessions. */
async function sessionCounts(db: pg.Client, window: BenchWindow) {
  const sets: (readonly BreakdownDimension[])[] = [
    ...new Set<BreakdownDimension>([...ONE_DIMENSIONS, ...IS_NOT_DIMENSIONS, ...TEXT_DIMENSIONS]),
  ].map((d) => [d]);
  sets.push(...PAIRS, ...TRIPLES);
  const columns = [...new Set(sets.flat())];
  // The column names come from the fixed lists above, never from input.
  const grouping = sets.map((set) => `(${set.join(", ")})`).join(", ");
  const result = await db.query<Record<string, string | number | null>>(
    `SELECT ${columns.join(", ")}, GROUPING(${columns.join(", ")})::int AS g, count(*)::int AS n
       FROM sessions WHERE project_id = $1 AND started_at >= $2 AND started_at < $3
      GROUP BY GROUPING SETS (${grouping}, ())`,
    [BENCH_PROJECT, window.start, window.end],
  );
  // GROUPING's bit for column i (most significant first) is 1 where the column is aggregated away.
  const maskOf = (set: readonly string[]) =>
    columns.reduce((mask, c, i) => (set.includes(c) ? mask : mask | (1 << (columns.length - 1 - i))), 0);
  const rowsOf = (set: readonly BreakdownDimension[]) => {
    const mask = maskOf(set);
    const rows: { values: string[]; n: number }[] = [];
    for (const row of result.rows) {
      if (row.g !== mask) continue;
      const values = set.map((c) => row[c]);
      if (values.every((v) => typeof v === "string" && isSet(v))) {
        rows.push({ values: values as string[], n: Number(row.n) });
      }
    }
    return rows;
  };
  const allMask = (1 << columns.length) - 1;
  const total = Number(result.rows.find((r) => r.g === allMask)?.n ?? 0);
  return { total, rowsOf };
}

/** Sessions with at least one event whose `column` has each value (the page and name filters). */
async function eventFieldCounts(
  db: pg.Client,
  window: BenchWindow,
  column: "path" | "origin" | "name",
): Promise<{ value: string; n: number }[]> {
  // Over the window's events, not only those of sessions started in it: the few sessions crossing
  // the window's edges do not move a share by a measurable amount, and this needs no join.
  const result = await db.query<{ value: string; n: number }>(
    `SELECT ${column} AS value, count(DISTINCT session_id)::int AS n FROM events
      WHERE project_id = $1 AND created_at >= $2 AND created_at < $3
        AND ${column} IS NOT NULL AND ${column} <> ''
      GROUP BY 1`,
    [BENCH_PROJECT, window.start, window.end],
  );
  return result.rows;
}

/**
 * Sessions with an event on a page of each section: a path's leading segment ("/blog/") that two
 * paths or more share, matched with `contains`, as a dashboard's search of a site section.
 */
async function pathSectionCounts(db: pg.Client, window: BenchWindow): Promise<Candidate[]> {
  const inWindow = "project_id = $1 AND created_at >= $2 AND created_at < $3";
  const result = await db.query<{ value: string; n: number }>(
    `WITH sections AS (
       SELECT substring(path from '^/[^/]+/') AS section FROM events
       WHERE ${inWindow} AND path ~ '^/[^/]+/.'
       GROUP BY 1 HAVING count(DISTINCT path) >= 2
     )
     SELECT s.section AS value, count(DISTINCT e.session_id)::int AS n
     FROM sections s JOIN events e ON e.project_id = $1 AND e.created_at >= $2 AND e.created_at < $3
       AND strpos(e.path, s.section) > 0
     GROUP BY 1`,
    [BENCH_PROJECT, window.start, window.end],
  );
  return result.rows.map((r) => ({
    filters: [{ name: "path", operator: "contains", value: [r.value] }],
    sessions: r.n,
    order: 0,
    tieBreak: r.value,
  }));
}

const isFilter = (name: BenchFilter["name"], value: string): BenchFilter => ({
  name,
  operator: "is",
  value: [value],
});

function pickText(
  rowsOf: (set: readonly BreakdownDimension[]) => { values: string[]; n: number }[],
  total: number,
): Candidate | undefined {
  // Prefixes of the values, matched with `contains` (anywhere in a value), so a candidate may
  // resolve to several values of the dimension's dictionary, as a user's search does. Those that
  // match two values or more win over single-value matches, which measure nothing `is` does not.
  const multi: Candidate[] = [];
  const single: Candidate[] = [];
  TEXT_DIMENSIONS.forEach((dimension, order) => {
    const values = rowsOf([dimension])
      .map((r) => ({ value: r.values[0] ?? "", n: r.n }))
      .sort((a, b) => b.n - a.n || (a.value < b.value ? -1 : 1))
      .slice(0, TEXT_VALUES_MAX);
    const prefixes = new Set<string>();
    for (const { value } of values) {
      for (let length = 2; length <= Math.min(value.length, TEXT_PREFIX_MAX); length++) {
        prefixes.add(value.slice(0, length));
      }
    }
    for (const prefix of prefixes) {
      let sessions = 0;
      let matched = 0;
      for (const { value, n } of values) {
        if (value.includes(prefix)) {
          sessions += n;
          matched++;
        }
      }
      const candidate: Candidate = {
        filters: [{ name: dimension, operator: "contains", value: [prefix] }],
        sessions,
        // Shorter prefixes first among equals: they are the more typical search.
        order: order * 100 + prefix.length,
        tieBreak: prefix,
      };
      (matched >= 2 ? multi : single).push(candidate);
    }
  });
  return closest(multi, total) ?? closest(single, total);
}

function pickCombination(
  sets: readonly (readonly BreakdownDimension[])[],
  rowsOf: (set: readonly BreakdownDimension[]) => { values: string[]; n: number }[],
  total: number,
): Candidate | undefined {
  const candidates: Candidate[] = [];
  sets.forEach((set, order) => {
    for (const row of rowsOf(set)) {
      candidates.push({
        filters: set.map((dimension, i) => isFilter(dimension, row.values[i] ?? "")),
        sessions: row.n,
        order,
        tieBreak: row.values.join("\u0000"),
      });
    }
  });
  return closest(candidates, total);
}

/** Picks every filter case from the sessions (and events) of `window`, the bench's 30-day window. */
export async function pickFilters(db: pg.Client, window: BenchWindow): Promise<FilterPicks> {
  const began = performance.now();
  const { total, rowsOf } = await sessionCounts(db, window);
  const cases: FilterCase[] = [];
  const skipped: string[] = [];
  const range = `${100 * MIN_SHARE}–${100 * MAX_SHARE} %`;
  if (total === 0) {
    return {
      window,
      totalSessions: 0,
      cases,
      skipped: ["every filter: the 30-day window has no sessions"],
      pickSeconds: (performance.now() - began) / 1000,
    };
  }
  const add = (id: string, kind: FilterCaseKind, picked: Candidate, outOfRange?: string) =>
    cases.push({
      id,
      kind,
      filters: picked.filters,
      sessions: picked.sessions,
      share: picked.sessions / total,
      ...(outOfRange ? { outOfRange } : {}),
    });

  for (const dimension of ONE_DIMENSIONS) {
    const candidates = rowsOf([dimension]).map(
      (r): Candidate => ({
        filters: [isFilter(dimension, r.values[0] ?? "")],
        sessions: r.n,
        order: 0,
        tieBreak: r.values[0] ?? "",
      }),
    );
    const picked = closest(candidates, total);
    if (picked) add(`one:${dimension}`, "one", picked);
    else skipped.push(`\`${dimension} is …\`: no value keeps ${range} of the sessions`);
  }

  // isNot X keeps the sessions without X (those without a value included).
  const isNot: Candidate[] = [];
  IS_NOT_DIMENSIONS.forEach((dimension, order) => {
    for (const r of rowsOf([dimension])) {
      isNot.push({
        filters: [{ name: dimension, operator: "isNot", value: [r.values[0] ?? ""] }],
        sessions: total - r.n,
        order,
        tieBreak: r.values[0] ?? "",
      });
    }
  });
  const isNotPicked = closest(isNot, total);
  if (isNotPicked) add("isNot", "isNot", isNotPicked);
  else {
    // No value holds 80–98 %: the most selective `isNot` there is, measured and flagged, rather
    // than no `isNot` at all (it keeps more, so it is the harder case for a scan).
    const fallback = isNot
      .filter((c) => c.sessions > 0)
      .sort((a, b) => a.sessions - b.sessions || a.order - b.order || (a.tieBreak < b.tieBreak ? -1 : 1))[0];
    if (fallback) {
      add(
        "isNot",
        "isNot",
        fallback,
        `no single value holds 80–98 % of the sessions, so no \`isNot\` of one value keeps ${range}; ` +
          "measured with the one that keeps the fewest",
      );
    } else skipped.push("`isNot`: no value leaves any session");
  }

  const text = pickText(rowsOf, total);
  if (text) add("text", "text", text);
  else skipped.push(`text operator (\`contains\`): no prefix of a value keeps ${range}`);

  const two = pickCombination(PAIRS, rowsOf, total);
  if (two) add("two", "two", two);
  else skipped.push(`two filters: no pair of values keeps ${range}`);
  const three = pickCombination(TRIPLES, rowsOf, total);
  if (three) add("three", "three", three);
  else skipped.push(`three filters: no triple of values keeps ${range}`);

  for (const column of ["path", "origin", "name"] as const) {
    const candidates = (await eventFieldCounts(db, window, column)).map(
      (r): Candidate => ({
        filters: [isFilter(column, r.value)],
        sessions: r.n,
        order: 0,
        tieBreak: r.value,
      }),
    );
    const picked = closest(candidates, total);
    if (picked) add(column, column, picked);
    else skipped.push(`\`${column} is …\`: no value is in ${range} of the sessions`);
  }

  const property = closest(await propertyCounts(db, window), total);
  if (property) add("property", "property", property);
  else skipped.push(`\`properties.… is …\`: no property value is in ${range} of the sessions`);

  const propertyPrefixes = await propertyTextCounts(db, window);
  const propertyText = closest(propertyPrefixes.multi, total) ?? closest(propertyPrefixes.single, total);
  if (propertyText) add("propertyText", "propertyText", propertyText);
  else
    skipped.push(`\`properties.… contains …\`: no prefix of a property value is in ${range} of the sessions`);

  const section = closest(await pathSectionCounts(db, window), total);
  if (section) add("pathText", "pathText", section);
  else
    skipped.push(
      `\`path contains\` a section: no section shared by two paths is in ${range} of the sessions`,
    );

  // /export/charts with a filter and a breakdown by browser: the first one-dimension pick that is
  // not the breakdown itself (a chart split by the very value it keeps says little).
  const chart = cases.find((c) => c.kind === "one" && c.filters[0]?.name !== CHART_BREAKDOWN);
  if (chart) cases.push({ ...chart, id: "chart", kind: "chart" });
  else skipped.push("`/export/charts` with a filter: no one-dimension filter was picked");
  // And under two filters, of a pair without the breakdown's column.
  const chartPairs = PAIRS.filter((pair) => !(pair as readonly string[]).includes(CHART_BREAKDOWN));
  const chartTwo = pickCombination(chartPairs, rowsOf, total);
  if (chartTwo) add("chartTwo", "chartTwo", chartTwo);
  else skipped.push(`\`/export/charts\` under two filters: no pair of values keeps ${range}`);
  // And under the property filter picked above, a chart of the event that carries it most often.
  const propertyCase = cases.find((c) => c.kind === "property");
  const chartEvent =
    propertyCase?.filters[0] && (await propertyChartEvent(db, window, propertyCase.filters[0]));
  if (propertyCase && chartEvent)
    cases.push({ ...propertyCase, id: "chartProperty", kind: "chartProperty", chartEvent });
  else skipped.push("`/export/charts` under a property filter: no property filter was picked");
  return { window, totalSessions: total, cases, skipped, pickSeconds: (performance.now() - began) / 1000 };
}

const quote = (value: string): string => JSON.stringify(value);

/** `country is "NO" and device is "mobile"`: the filters written out, for the report. */
export function describeFilters(filters: readonly BenchFilter[]): string {
  return filters.map((f) => `${f.name} ${f.operator} ${f.value.map(quote).join(", ")}`).join(" and ");
}

/** The filter and the share it keeps, for headings and verdicts. */
export function describeCase(c: FilterCase): string {
  return `${describeFilters(c.filters)}, keeps ${pct(c.share)}`;
}
