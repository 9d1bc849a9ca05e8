/**
 * The independent reference for the insights endpoints: plain TypeScript over the raw events a
 * test inserted, following the wording of contract sections 3 and 5. It shares no code with the
 * SQL path (no schema, no filter compiler, no range resolver), so a defect in either shows up as
 * a difference.
 */

import { EVENT_FIELD_NAMES, FIELD_KEYS, NUMERIC_FIELD_NAMES, snakeCase } from "./event-fields";

export interface RawEvent {
  projectId: string;
  sessionId: string;
  profileId: string;
  deviceId: string;
  name: string;
  createdAt: Date;
  path: string | null;
  origin: string | null;
  title: string | null;
  referrer: string | null;
  referrerName: string | null;
  referrerType: string | null;
  duration: number;
  revenue: number;
  properties: Record<string, unknown>;
  country: string | null;
  region: string | null;
  city: string | null;
  device: string | null;
  brand: string | null;
  model: string | null;
  browser: string | null;
  browserVersion: string | null;
  os: string | null;
  osVersion: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  utmTerm: string | null;
  utmContent: string | null;
}

export interface RawFilter {
  name: string;
  operator: string;
  value?: Array<string | number>;
}

export interface RefSession {
  id: string;
  visitor: string;
  first: RawEvent;
  events: RawEvent[];
  start: number;
  durationMs: number;
  screenViews: number;
  bounce: boolean;
  revenue: number;
}

function fieldValue(event: RawEvent, name: string): unknown {
  if (name.startsWith("properties.")) {
    let value: unknown = event.properties;
    for (const key of name.slice("properties.".length).split(".")) {
      value =
        value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
    }
    if (value === undefined || value === null) return null;
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  const key = FIELD_KEYS[name];
  return key === undefined ? undefined : event[key];
}

const NUMERIC_TEXT = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** Does one value satisfy one filter? Written from the contract's operator table. */
function matches(value: unknown, filter: RawFilter, numericField: boolean): boolean {
  const values = filter.value ?? [];
  const text = value === null || value === undefined ? null : String(value);
  const equalsAny = () =>
    text !== null &&
    values.some((candidate) =>
      numericField ? Number(candidate) === Number(value) : String(candidate) === text,
    );
  const containsAny = () => text !== null && values.some((candidate) => text.includes(String(candidate)));
  switch (filter.operator) {
    case "is":
      return equalsAny();
    case "isNot":
      return !equalsAny();
    case "contains":
      return containsAny();
    case "doesNotContain":
      return !containsAny();
    case "startsWith":
      return text !== null && values.some((candidate) => text.startsWith(String(candidate)));
    case "endsWith":
      return text !== null && values.some((candidate) => text.endsWith(String(candidate)));
    case "regex":
      return text !== null && values.some((candidate) => new RegExp(String(candidate)).test(text));
    case "isNull":
      return text === null || (!numericField && text === "");
    case "isNotNull":
      return !(text === null || (!numericField && text === ""));
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      if (text === null || (!numericField && !NUMERIC_TEXT.test(text))) return false;
      const left = Number(text);
      const right = Number(values[0]);
      if (filter.operator === "gt") return left > right;
      if (filter.operator === "gte") return left >= right;
      if (filter.operator === "lt") return left < right;
      return left <= right;
    }
    default:
      throw new Error(`reference: unknown operator ${filter.operator}`);
  }
}

/** Event-scoped filters (contract A1): every filter holds for the event's own field. */
export function eventPasses(event: RawEvent, filters: RawFilter[]): boolean {
  return filters.every((filter) => {
    const name = filter.name.startsWith("properties.") ? filter.name : snakeCase(filter.name);
    return matches(fieldValue(event, name), filter, NUMERIC_FIELD_NAMES.has(name));
  });
}

function sessionPasses(session: RefSession, filters: RawFilter[]): boolean {
  return filters.every((filter) => {
    const name = filter.name.startsWith("properties.") ? filter.name : snakeCase(filter.name);
    const numeric = NUMERIC_FIELD_NAMES.has(name);
    if (name in FIELD_KEYS && !EVENT_FIELD_NAMES.has(name)) {
      const value = name === "profile_id" ? session.visitor : fieldValue(session.first, name);
      return matches(value, filter, numeric);
    }
    // Event fields: the session has at least one matching event.
    return session.events.some((event) => matches(fieldValue(event, name), filter, numeric));
  });
}

export function buildSessions(events: RawEvent[], projectId: string): RefSession[] {
  const bySession = new Map<string, RawEvent[]>();
  for (const event of events) {
    if (event.projectId !== projectId) continue;
    const list = bySession.get(event.sessionId) ?? [];
    list.push(event);
    bySession.set(event.sessionId, list);
  }
  return [...bySession.entries()].map(([id, list]) => {
    const sorted = [...list].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    const first = sorted[0] as RawEvent;
    const last = sorted[sorted.length - 1] as RawEvent;
    const screenViews = sorted.filter((event) => event.name === "screen_view").length;
    return {
      id,
      visitor: first.profileId,
      first,
      events: sorted,
      start: first.createdAt.getTime(),
      durationMs: last.createdAt.getTime() - first.createdAt.getTime(),
      screenViews,
      bounce: screenViews <= 1,
      revenue: sorted.reduce((sum, event) => sum + event.revenue, 0),
    };
  });
}

/** Half-up rounding to 2 decimals of numerator/denominator × scale; 0 for an empty denominator. */
function round2(numerator: number, denominator: number, scale = 1): number {
  if (denominator === 0) return 0;
  return Math.round((numerator * scale * 100) / denominator) / 100;
}

export interface RefMetrics {
  bounce_rate: number;
  unique_visitors: number;
  total_sessions: number;
  avg_session_duration: number;
  total_screen_views: number;
  views_per_session: number;
  total_revenue: number;
}

function metricsOf(list: RefSession[]): RefMetrics {
  const timed = list.filter((session) => session.durationMs > 0);
  const screenViews = list.reduce((sum, session) => sum + session.screenViews, 0);
  return {
    bounce_rate: round2(list.filter((session) => session.bounce).length, list.length, 100),
    unique_visitors: new Set(list.map((session) => session.visitor)).size,
    total_sessions: list.length,
    avg_session_duration: round2(
      timed.reduce((sum, session) => sum + session.durationMs, 0),
      timed.length * 1000,
    ),
    total_screen_views: screenViews,
    views_per_session: round2(screenViews, list.length),
    total_revenue: list.reduce((sum, session) => sum + session.revenue, 0),
  };
}

export interface RefScope {
  projectId: string;
  /** Window as [start, end) epoch milliseconds. */
  start: number;
  end: number;
  filters?: RawFilter[];
}

export function sessionsInScope(events: RawEvent[], scope: RefScope): RefSession[] {
  return buildSessions(events, scope.projectId).filter(
    (session) =>
      session.start >= scope.start &&
      session.start < scope.end &&
      sessionPasses(session, scope.filters ?? []),
  );
}

/** `/metrics`: totals plus one entry per bucket (bucket starts given, ascending). */
export function referenceMetrics(
  events: RawEvent[],
  scope: RefScope,
  bucketStarts: number[],
): { metrics: RefMetrics; series: RefMetrics[] } {
  const list = sessionsInScope(events, scope);
  const series = bucketStarts.map((bucketStart, index) => {
    const next = bucketStarts[index + 1] ?? Number.POSITIVE_INFINITY;
    return metricsOf(list.filter((session) => session.start >= bucketStart && session.start < next));
  });
  return { metrics: metricsOf(list), series };
}

function compareText(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/** Every page of the scope's sessions with its figures, unsorted (time on page in seconds and minutes). */
function pageFigures(events: RawEvent[], scope: RefScope) {
  const pages = new Map<
    string,
    {
      origin: string | null;
      path: string | null;
      titles: Set<string>;
      sessions: Map<string, boolean>;
      views: RawEvent[];
    }
  >();
  for (const session of sessionsInScope(events, scope)) {
    for (const event of session.events) {
      if (event.name !== "screen_view") continue;
      const key = JSON.stringify([event.origin, event.path]);
      const page = pages.get(key) ?? {
        origin: event.origin,
        path: event.path,
        titles: new Set<string>(),
        sessions: new Map<string, boolean>(),
        views: [],
      };
      if (event.title !== null) page.titles.add(event.title);
      page.sessions.set(session.id, session.bounce);
      page.views.push(event);
      pages.set(key, page);
    }
  }
  return [...pages.values()].map((page) => {
    const timed = page.views.filter((event) => event.duration > 0);
    const bounces = [...page.sessions.values()].filter(Boolean).length;
    return {
      title: [...page.titles].sort().at(-1) ?? null,
      origin: page.origin,
      path: page.path,
      sessions: page.sessions.size,
      pageviews: page.views.length,
      bounce_rate: round2(bounces, page.sessions.size, 100),
      avg_duration: round2(
        timed.reduce((sum, event) => sum + event.duration, 0),
        timed.length * 1000,
      ),
      revenue: page.views.reduce((sum, event) => sum + event.revenue, 0),
      avg_minutes: round2(
        timed.reduce((sum, event) => sum + event.duration, 0),
        timed.length * 60_000,
      ),
    };
  });
}

/** `/pages`, complete and sorted (sessions desc, path, origin). */
export function referencePages(events: RawEvent[], scope: RefScope) {
  return pageFigures(events, scope)
    .map(({ avg_minutes: _minutes, ...row }) => row)
    .sort(
      (a, b) => b.sessions - a.sessions || compareText(a.path, b.path) || compareText(a.origin, b.origin),
    );
}

/** `/pages/performance`, complete: matching `search`, sorted by one figure, ties by path then origin. */
export function referencePagePerformance(
  events: RawEvent[],
  scope: RefScope,
  options: {
    search?: string;
    sortBy: "sessions" | "pageviews" | "bounce_rate" | "avg_duration";
    sortOrder: "asc" | "desc";
  },
) {
  const sign = options.sortOrder === "asc" ? 1 : -1;
  return pageFigures(events, scope)
    .map((page) => ({
      origin: page.origin,
      path: page.path,
      title: page.title ?? "",
      sessions: page.sessions,
      pageviews: page.pageviews,
      avg_duration: page.avg_minutes,
      bounce_rate: page.bounce_rate,
      seo_signals: {
        high_bounce: page.bounce_rate > 70,
        low_engagement: page.avg_minutes < 1,
        good_landing_page: page.bounce_rate < 40 && page.avg_minutes > 2,
      },
    }))
    .filter(
      (page) =>
        options.search === undefined ||
        [page.path ?? "", page.origin ?? "", page.title].some((text) => text.includes(options.search ?? "")),
    )
    .sort(
      (a, b) =>
        sign * (a[options.sortBy] - b[options.sortBy]) ||
        compareText(a.path, b.path) ||
        compareText(a.origin, b.origin),
    );
}

const PREFIXES: Record<string, string> = {
  region: "country",
  city: "country",
  browser_version: "browser",
  os_version: "os",
};

/** `/{dimension}`, complete and sorted (sessions desc, name, prefix). Empty strings count as not set. */
export function referenceBreakdown(events: RawEvent[], scope: RefScope, dimension: string) {
  const groups = new Map<string, { name: string | null; prefix: string | null; sessions: RefSession[] }>();
  const prefixField = PREFIXES[dimension];
  const read = (session: RefSession, field: string): string | null => {
    const value = fieldValue(session.first, field);
    return value === null || value === undefined || value === "" ? null : String(value);
  };
  for (const session of sessionsInScope(events, scope)) {
    const name = read(session, dimension);
    const prefix = prefixField ? read(session, prefixField) : null;
    const key = JSON.stringify([name, prefix]);
    const group = groups.get(key) ?? { name, prefix, sessions: [] };
    group.sessions.push(session);
    groups.set(key, group);
  }
  return [...groups.values()]
    .map((group) => {
      const metrics = metricsOf(group.sessions);
      return {
        name: group.name,
        ...(prefixField ? { prefix: group.prefix } : {}),
        sessions: metrics.total_sessions,
        pageviews: metrics.total_screen_views,
        bounce_rate: metrics.bounce_rate,
        avg_session_duration: metrics.avg_session_duration,
        revenue: metrics.total_revenue,
      };
    })
    .sort(
      (a, b) =>
        b.sessions - a.sessions ||
        compareText(a.name, b.name) ||
        compareText(a.prefix ?? null, b.prefix ?? null),
    );
}

/** `/pages/entry_exit`: sessions by their first (entry) or last (exit) screen view's page, sorted (sessions desc, path, origin). */
export function referenceEntryExit(events: RawEvent[], scope: RefScope, mode: "entry" | "exit") {
  const pages = new Map<string, { origin: string | null; path: string | null; sessions: RefSession[] }>();
  for (const session of sessionsInScope(events, scope)) {
    const views = session.events.filter((event) => event.name === "screen_view");
    const view = mode === "entry" ? views[0] : views.at(-1);
    if (!view) continue;
    const key = JSON.stringify([view.origin, view.path]);
    const page = pages.get(key) ?? { origin: view.origin, path: view.path, sessions: [] };
    page.sessions.push(session);
    pages.set(key, page);
  }
  return [...pages.values()]
    .map((page) => ({
      origin: page.origin,
      path: page.path,
      sessions: page.sessions.length,
      pageviews: page.sessions.reduce((sum, session) => sum + session.screenViews, 0),
      revenue: page.sessions.reduce((sum, session) => sum + session.revenue, 0),
      bounce_rate: round2(
        page.sessions.filter((session) => session.bounce).length,
        page.sessions.length,
        100,
      ),
    }))
    .sort(
      (a, b) => b.sessions - a.sessions || compareText(a.path, b.path) || compareText(a.origin, b.origin),
    );
}
