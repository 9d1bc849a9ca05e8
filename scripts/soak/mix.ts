import { BREAKDOWN_DIMENSIONS } from "../../src/lib/dimensions";
import type { Rng } from "../seed/random";

/**
 * The requests of the soak: what a dashboard and a few scripts ask at once. Each client draws its
 * next request from this mix with its own seeded generator, so a run is repeatable and 200 clients
 * spread over every route, window and filter (many distinct cache keys, the cold case) while
 * sharing some (the identical cold misses a dashboard opening causes).
 */

/** Values the filters use, read from the loaded data (never fixed in the code). */
export interface SoakValues {
  projectId: string;
  countries: string[];
  paths: string[];
  eventNames: string[];
  /** The newest day with data, `YYYY-MM-DD`; custom windows end on or before it. */
  lastDay: string;
}

export type RequestKind =
  | "metrics"
  | "live"
  | "pages"
  | "breakdown"
  | "export page"
  | "export stream"
  | "chart"
  | "health";

export interface SoakRequest {
  kind: RequestKind;
  path: string;
}

const PRESETS = ["7d", "30d", "3m", "today", "yesterday", "monthToDate", "lastMonth"] as const;
const json = (value: unknown) => encodeURIComponent(JSON.stringify(value));

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** A window: a preset most of the time, else a custom span ending at or before the last day. */
function windowParams(rng: Rng, values: SoakValues): string {
  if (rng.chance(0.7)) return `range=${rng.pick(PRESETS)}`;
  const end = addDays(values.lastDay, -rng.int(20));
  return `startDate=${addDays(end, -rng.pick([6, 13, 29, 59]))}&endDate=${end}`;
}

/** No filter half the time, else one or two of the kinds a dashboard click adds. */
function filterParam(rng: Rng, values: SoakValues): string {
  if (rng.chance(0.5)) return "";
  const filters = [{ name: "country", operator: "is", value: [rng.pick(values.countries)] }];
  if (rng.chance(0.4)) filters.push({ name: "path", operator: "is", value: [rng.pick(values.paths)] });
  return `&filters=${json(filters)}`;
}

const WEIGHTS: ReadonlyArray<readonly [RequestKind, number]> = [
  ["metrics", 18],
  ["live", 8],
  ["pages", 14],
  ["breakdown", 40],
  ["export page", 8],
  ["export stream", 2],
  ["chart", 9],
  ["health", 1],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);

function pickKind(rng: Rng): RequestKind {
  let left = rng.int(TOTAL_WEIGHT);
  for (const [kind, weight] of WEIGHTS) {
    if (left < weight) return kind;
    left -= weight;
  }
  return "metrics";
}

export function soakRequest(rng: Rng, values: SoakValues): SoakRequest {
  const kind = pickKind(rng);
  const project = values.projectId;
  const window = () => `${windowParams(rng, values)}${filterParam(rng, values)}`;
  switch (kind) {
    case "metrics":
      return { kind, path: `/insights/${project}/metrics?${window()}` };
    case "live":
      return { kind, path: `/insights/${project}/live` };
    case "pages":
      return { kind, path: `/insights/${project}/pages?${window()}&limit=${rng.pick([10, 25])}` };
    case "breakdown":
      return { kind, path: `/insights/${project}/${rng.pick(BREAKDOWN_DIMENSIONS)}?${window()}` };
    case "export page": {
      const page = rng.chance(0.5) ? `&page=${rng.range(1, 5)}` : "";
      const event = rng.chance(0.5) ? `&event=${encodeURIComponent(rng.pick(values.eventNames))}` : "";
      return {
        kind,
        path: `/export/events?projectId=${project}&limit=${rng.pick([50, 100])}${page}${event}`,
      };
    }
    case "export stream": {
      const end = addDays(values.lastDay, -rng.int(30));
      const span = `start=${addDays(end, -rng.pick([0, 6]))}&end=${end}`;
      const format = rng.pick(["ndjson", "csv"]);
      return { kind, path: `/export/events?projectId=${project}&format=${format}&limit=1000&${span}` };
    }
    case "chart": {
      const series = [{ name: rng.pick(values.eventNames), segment: rng.pick(["event", "user", "session"]) }];
      const breakdowns = rng.chance(0.4) ? `&breakdowns=${json([{ name: "country" }])}` : "";
      return {
        kind,
        path: `/export/charts?projectId=${project}&series=${json(series)}&${windowParams(rng, values)}${breakdowns}`,
      };
    }
    case "health":
      return { kind, path: "/health" };
  }
}
