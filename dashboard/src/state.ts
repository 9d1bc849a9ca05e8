import type { Filter } from "../../client";

/** What the board shows; all of it lives in the URL, so a link reopens the same view. */
export const RANGES = ["today", "7d", "30d", "3m", "12m"] as const;
export type BoardRange = (typeof RANGES)[number];

export interface BoardState {
  project: string;
  range: BoardRange;
  filters: Filter[];
  event: string;
  /** A property of `event` its chart is broken down by (`properties.<key>`), or "". */
  by: string;
}

export interface Credentials {
  clientId: string;
  clientSecret: string;
}

const CREDENTIALS_KEY = "analytics-dashboard-credentials";
/** A range of the picker; anything else is the default, the last 30 days. */
export const parseRange = (value: string | null): BoardRange =>
  RANGES.find((range) => range === value) ?? "30d";

function parseFilters(text: string | null): Filter[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as Filter[]) : [];
  } catch {
    return [];
  }
}

export function readState(location: Location): BoardState {
  const query = new URLSearchParams(location.search);
  return {
    project: query.get("project") ?? "",
    range: parseRange(query.get("range")),
    filters: parseFilters(query.get("filters")),
    event: query.get("event") ?? "",
    by: query.get("by") ?? "",
  };
}

export function stateUrl(state: BoardState): string {
  const query = new URLSearchParams({ project: state.project, range: state.range });
  if (state.filters.length > 0) query.set("filters", JSON.stringify(state.filters));
  if (state.event) query.set("event", state.event);
  if (state.by) query.set("by", state.by);
  return `?${query.toString()}`;
}

export function storedCredentials(): Credentials | undefined {
  const text = sessionStorage.getItem(CREDENTIALS_KEY);
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<Credentials>;
    return parsed.clientId && parsed.clientSecret
      ? { clientId: parsed.clientId, clientSecret: parsed.clientSecret }
      : undefined;
  } catch {
    return undefined;
  }
}

export function storeCredentials(credentials: Credentials | undefined): void {
  if (credentials) sessionStorage.setItem(CREDENTIALS_KEY, JSON.stringify(credentials));
  else sessionStorage.removeItem(CREDENTIALS_KEY);
}

/** A filter for a clicked row: a missing value is `isNull`, anything else `is`. */
export function filterFor(name: string, value: string | null): Filter {
  return value === null || value === ""
    ? { name, operator: "isNull" }
    : { name, operator: "is", value: [value] };
}

export function sameFilter(a: Filter, b: Filter): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function describeFilter(filter: Filter): string {
  const values = (filter.value ?? []).join(", ");
  return filter.operator === "isNull"
    ? `${filter.name} is not set`
    : `${filter.name} ${filter.operator} ${values}`;
}
