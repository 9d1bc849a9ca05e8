import type { ListedEvent } from "./listing-reference";
import { buildSessions, eventPasses, type RawEvent, type RawFilter, sessionsInScope } from "./reference";

/**
 * The reference for the profile routes (contract A3), in plain TypeScript over the raw events a test
 * inserted and the profile records it stored.
 */

export interface ProfileRecord {
  id: string;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  avatar?: string | null;
  properties?: Record<string, unknown>;
}

export interface ProfileSelection {
  projectId: string;
  /** [start, end) epoch ms; absent: the whole history. */
  window?: { start: number; end: number };
  filters?: RawFilter[];
  nameTokens?: string[];
  email?: string;
  lastKnown?: Partial<Record<"country" | "city" | "device" | "browser", string>>;
  identified?: boolean;
  /** Last seen before this instant. */
  lastSeenBefore?: number;
  minSessions?: number;
  performedEvent?: string;
  order?: "asc" | "desc";
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const latestFirst = (a: ListedEvent, b: ListedEvent) =>
  b.createdAt.getTime() - a.createdAt.getTime() || byteOrder(b.id, a.id);

/** Every profile_id of the project with its events, newest first. */
function eventsByProfile(events: ListedEvent[], projectId: string): Map<string, ListedEvent[]> {
  const byProfile = new Map<string, ListedEvent[]>();
  for (const event of events) {
    if (event.projectId !== projectId) continue;
    byProfile.set(event.profileId, [...(byProfile.get(event.profileId) ?? []), event]);
  }
  for (const list of byProfile.values()) list.sort(latestFirst);
  return byProfile;
}

/** The profile row of one profile id, from its events (newest first) and stored record. */
export function profileRow(id: string, projectId: string, list: RawEvent[], record?: ProfileRecord) {
  const times = list.map((event) => event.createdAt.getTime());
  return {
    id,
    first_name: record?.firstName ?? null,
    last_name: record?.lastName ?? null,
    email: record?.email ?? null,
    avatar: record?.avatar ?? null,
    properties: record?.properties ?? {},
    project_id: projectId,
    is_external: list.some((event) => event.profileId !== event.deviceId),
    created_at: new Date(Math.min(...times)).toISOString(),
    last_seen_at: new Date(Math.max(...times)).toISOString(),
    groups: [],
  };
}

const contains = (text: string | null | undefined, token: string) =>
  (text ?? "").toLowerCase().includes(token.toLowerCase());

/** `/profiles`: the selected profiles, by first seen then id, as rows. */
export function referenceProfileRows(
  events: ListedEvent[],
  records: ProfileRecord[],
  selection: ProfileSelection,
) {
  const { window } = selection;
  const inWindow = (event: RawEvent) =>
    !window || (event.createdAt.getTime() >= window.start && event.createdAt.getTime() < window.end);
  const sessions = buildSessions(events, selection.projectId);
  const rows = [...eventsByProfile(events, selection.projectId).entries()].flatMap(([id, list]) => {
    const record = records.find((candidate) => candidate.id === id);
    const latest = list[0] as ListedEvent;
    const windowed = list.filter(inWindow);
    const row = profileRow(id, selection.projectId, list, record);
    const keep =
      (!window || windowed.length > 0) &&
      (!selection.filters?.length || windowed.some((event) => eventPasses(event, selection.filters ?? []))) &&
      (selection.performedEvent === undefined ||
        windowed.some((event) => event.name === selection.performedEvent)) &&
      Object.entries(selection.lastKnown ?? {}).every(
        ([key, value]) => latest[key as keyof RawEvent] === value,
      ) &&
      (selection.identified === undefined || row.is_external === selection.identified) &&
      (selection.lastSeenBefore === undefined || Date.parse(row.last_seen_at) < selection.lastSeenBefore) &&
      (selection.minSessions === undefined ||
        sessions.filter(
          (session) =>
            session.visitor === id &&
            (!window || (session.start >= window.start && session.start < window.end)),
        ).length >= selection.minSessions) &&
      (selection.nameTokens ?? []).every((token) =>
        [
          id,
          record?.email,
          record?.firstName,
          record?.lastName,
          `${record?.firstName ?? ""} ${record?.lastName ?? ""}`,
        ].some((text) => contains(text, token)),
      ) &&
      (selection.email === undefined || contains(record?.email, selection.email));
    return keep ? [row] : [];
  });
  const sign = selection.order === "asc" ? 1 : -1;
  return rows.sort(
    (a, b) => sign * (Date.parse(a.created_at) - Date.parse(b.created_at) || byteOrder(a.id, b.id)),
  );
}

/** Local calendar date of an instant in `timezone`, `YYYY-MM-DD`. */
const localDate = (at: Date, timezone: string) =>
  new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(at);

const round2 = (value: number) => Math.round(value * 100) / 100;

/** `percentile_cont(0.9)`: linear interpolation between the two nearest ranks. */
function percentile90(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = 0.9 * (sorted.length - 1);
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const lowValue = sorted[low] ?? 0;
  return lowValue + (position - low) * ((sorted[high] ?? 0) - lowValue);
}

/** `/profiles/{id}/metrics` over its events and sessions of [start, end). */
export function referenceProfileMetrics(
  events: RawEvent[],
  profileId: string,
  scope: { projectId: string; start: number; end: number; timezone: string; filters?: RawFilter[] },
) {
  const filters = scope.filters ?? [];
  const own = events.filter(
    (event) =>
      event.projectId === scope.projectId &&
      event.profileId === profileId &&
      event.createdAt.getTime() >= scope.start &&
      event.createdAt.getTime() < scope.end &&
      eventPasses(event, filters),
  );
  const sessions = sessionsInScope(events, scope).filter((session) => session.visitor === profileId);
  const times = own.map((event) => event.createdAt.getTime());
  const durations = sessions.map((session) => session.durationMs).filter((duration) => duration > 0);
  const starts = sessions.map((session) => session.start);
  const count = sessions.length;
  return {
    profileId,
    firstSeen: times.length ? new Date(Math.min(...times)).toISOString() : null,
    lastSeen: times.length ? new Date(Math.max(...times)).toISOString() : null,
    sessions: count,
    screenViews: own.filter((event) => event.name === "screen_view").length,
    totalEvents: own.length,
    conversionEvents: own.filter(
      (event) => !["screen_view", "session_start", "session_end"].includes(event.name),
    ).length,
    uniqueDaysActive: new Set(own.map((event) => localDate(event.createdAt, scope.timezone))).size,
    avgSessionDurationMin: durations.length
      ? round2(durations.reduce((sum, duration) => sum + duration, 0) / durations.length / 60_000)
      : 0,
    p90SessionDurationMin: durations.length ? round2(percentile90(durations) / 60_000) : 0,
    avgEventsPerSession: count
      ? round2(sessions.reduce((sum, session) => sum + session.events.length, 0) / count)
      : 0,
    avgTimeBetweenSessionsSec:
      count > 1 ? round2((Math.max(...starts) - Math.min(...starts)) / 1000 / (count - 1)) : 0,
    bounceRate: count ? round2((100 * sessions.filter((session) => session.bounce).length) / count) : 0,
    revenue: own.reduce((sum, event) => sum + event.revenue, 0),
  };
}
