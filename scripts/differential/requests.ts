import { BREAKDOWN_DIMENSIONS } from "../../src/lib/dimensions";
import { FILTER_OPERATORS } from "../../src/lib/filter-parser";
import { Rng } from "../seed/random";

/**
 * Seeded random read requests for `npm run differential` (differential.ts): /metrics, /pages,
 * every breakdown and /export/charts under zero to three filters of every operator on the session
 * attributes, paths, origins and event names, with values drawn from the data set itself (so most
 * filters keep something), over windows of 1 to 40 days or a `range` preset, in four timezones.
 */

/** The columns a request filters on: every breakdown dimension, and the page and event-name filters. */
export const FILTERED_COLUMNS = [...BREAKDOWN_DIMENSIONS, "path", "origin", "name"] as const;
export type FilteredColumn = (typeof FILTERED_COLUMNS)[number];

/** Per column, its most frequent values in the data set (the draw's pool). */
export type ValuePools = ReadonlyMap<FilteredColumn, readonly string[]>;

export interface DifferentialRequest {
  kind: "metrics" | "pages" | "breakdown" | "charts";
  /** Path and query, the same for both servers. */
  path: string;
}

const TIMEZONES = ["UTC", "Europe/Oslo", "Asia/Kolkata", "America/New_York"] as const;
const WINDOW_DAYS = [1, 7, 30, 40] as const;
/** The presets drawn, by the days they span at most (a day: hour buckets in charts). */
const PRESET_DAYS = { today: 1, yesterday: 1, "7d": 7, "30d": 30, monthToDate: 31, lastMonth: 31 } as const;
const PRESETS = Object.keys(PRESET_DAYS) as Array<keyof typeof PRESET_DAYS>;
const EVENT_NAMES = ["screen_view", "button_click", "add_to_cart", "purchase", "*"] as const;
const SEGMENTS = ["event", "user", "session"] as const;
/** Every operator the session attributes take (not the numeric comparisons), `is` weighted as dashboards use it. */
const OPERATORS = [
  "is",
  "is",
  ...FILTER_OPERATORS.filter((operator) => !["gt", "gte", "lt", "lte"].includes(operator)),
] as const;

const DAY_MS = 86_400_000;
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function pick<T>(random: Rng, items: readonly T[]): T {
  return items[random.int(items.length)] as T;
}

/** Part of a value that a text operator can match on: its start, end or middle. */
function fragment(random: Rng, value: string, where: "start" | "end" | "middle"): string {
  if (value.length <= 2) return value;
  const length = 1 + Math.floor(random.float() * Math.min(5, value.length - 1));
  if (where === "start") return value.slice(0, length);
  if (where === "end") return value.slice(value.length - length);
  const from = Math.floor(random.float() * (value.length - length));
  return value.slice(from, from + length);
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

interface Filter {
  name: FilteredColumn;
  operator: string;
  value: string[];
}

function drawFilter(random: Rng, pools: ValuePools): Filter | undefined {
  const name = pick(random, FILTERED_COLUMNS);
  const pool = pools.get(name) ?? [];
  if (pool.length === 0) return undefined;
  const operator = pick(random, OPERATORS);
  const values = (count: number) => Array.from({ length: count }, () => pick(random, pool));
  switch (operator) {
    case "is":
    case "isNot":
      return { name, operator, value: [...new Set(values(1 + Math.floor(random.float() * 3)))] };
    case "contains":
    case "doesNotContain":
      return { name, operator, value: values(1).map((v) => fragment(random, v, "middle")) };
    case "startsWith":
      return { name, operator, value: values(1).map((v) => fragment(random, v, "start")) };
    case "endsWith":
      return { name, operator, value: values(1).map((v) => fragment(random, v, "end")) };
    case "regex":
      return { name, operator, value: [`^${escapeRegex(fragment(random, pick(random, pool), "start"))}`] };
    default:
      return { name, operator, value: [] };
  }
}

/** The request of draw `index` of run `seed`; `lastDay` is the data's last complete UTC day (ms). */
export function differentialRequest(
  seed: number,
  index: number,
  project: string,
  pools: ValuePools,
  lastDay: number,
): DifferentialRequest {
  const random = new Rng().reseed(seed, index);
  // A preset a quarter of the time: windows that end now, or months of the calendar.
  const preset = random.float() < 0.25 ? pick(random, PRESETS) : undefined;
  const days = preset === undefined ? pick(random, WINDOW_DAYS) : PRESET_DAYS[preset];
  const params = new URLSearchParams(
    preset === undefined
      ? { startDate: isoDate(lastDay - (days - 1) * DAY_MS), endDate: isoDate(lastDay) }
      : { range: preset },
  );
  params.set("timezone", pick(random, TIMEZONES));
  const filters: Filter[] = [];
  const count = Math.floor(random.float() * 4);
  for (let i = 0; i < count; i++) {
    const filter = drawFilter(random, pools);
    if (filter) filters.push(filter);
  }
  if (filters.length > 0) params.set("filters", JSON.stringify(filters));
  const roll = random.float();
  if (random.float() < 0.3) params.set("previous", "true");
  if (roll < 0.2) return { kind: "metrics", path: `/insights/${project}/metrics?${params}` };
  params.delete("previous");
  // A short page too: the ranking's cut must fall in the same place on both paths.
  if (roll < 0.7 && random.float() < 0.3) params.set("limit", String(1 + Math.floor(random.float() * 4)));
  if (roll < 0.35) return { kind: "pages", path: `/insights/${project}/pages?${params}` };
  if (roll < 0.7) {
    return {
      kind: "breakdown",
      path: `/insights/${project}/${pick(random, BREAKDOWN_DIMENSIONS)}?${params}`,
    };
  }
  params.set("projectId", project);
  params.set("interval", days === 1 ? "hour" : pick(random, ["day", "day", "week", "month"] as const));
  params.set("series", JSON.stringify([{ name: pick(random, EVENT_NAMES) }]));
  params.set("segment", pick(random, SEGMENTS));
  if (random.float() < 0.3) params.set("previous", "true");
  if (random.float() < 0.6) {
    params.set(
      "breakdowns",
      JSON.stringify([{ name: pick(random, ["country", "device", "browser", "path", "referrer_name"]) }]),
    );
  }
  return { kind: "charts", path: `/export/charts?${params}` };
}
