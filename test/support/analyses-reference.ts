import { eventPasses, type RawEvent, type RawFilter } from "./reference";

/**
 * The reference for the product analyses (contract A5–A7), in plain TypeScript over the raw events
 * a test inserted, by algorithms other than the SQL's.
 */

export interface FunnelReferenceScope {
  projectId: string;
  start: number;
  end: number;
  steps: string[];
  windowHours: number;
  groupBy: "session_id" | "profile_id";
  filters?: RawFilter[];
}

/**
 * A group's level: for every event of the first step as the start, walk the steps taking the
 * earliest event of each that is strictly later than the one before and within the window of the
 * start (the earliest choice never loses a later step); the best start wins.
 */
function levelOf(events: RawEvent[], steps: string[], windowMs: number): number {
  const times = (name: string) =>
    events.filter((event) => event.name === name).map((event) => event.createdAt.getTime());
  const byStep = steps.map(times);
  let best = 0;
  for (const start of byStep[0] ?? []) {
    let level = 1;
    let last = start;
    for (let k = 1; k < steps.length; k++) {
      const next = (byStep[k] ?? [])
        .filter((t) => t > last && t - start <= windowMs)
        .sort((a, b) => a - b)[0];
      if (next === undefined) break;
      level = k + 1;
      last = next;
    }
    best = Math.max(best, level);
  }
  return best;
}

/** users_k of the funnel: groups whose level is at least k, for k = 1…steps. */
export function referenceFunnel(events: RawEvent[], scope: FunnelReferenceScope): number[] {
  const groups = new Map<string, RawEvent[]>();
  for (const event of events) {
    const at = event.createdAt.getTime();
    if (event.projectId !== scope.projectId || at < scope.start || at >= scope.end) continue;
    if (!scope.steps.includes(event.name) || !eventPasses(event, scope.filters ?? [])) continue;
    const key = scope.groupBy === "session_id" ? event.sessionId : event.profileId;
    groups.set(key, [...(groups.get(key) ?? []), event]);
  }
  const levels = [...groups.values()].map((list) =>
    levelOf(list, scope.steps, scope.windowHours * 3_600_000),
  );
  return scope.steps.map((_, index) => levels.filter((level) => level >= index + 1).length);
}

/** 100 × part ÷ whole, rounded half up to 2 decimals; 0 when whole is 0. */
const percent = (part: number, whole: number) =>
  whole === 0 ? 0 : Math.round((10_000 * part) / whole) / 100;

/** The `steps` of the answer as contract A5 words them, from users_k. */
export function referenceFunnelSteps(names: string[], users: number[]) {
  const dropoffs = users.map((count, k) => (k < users.length - 1 ? count - (users[k + 1] ?? 0) : null));
  let highestAt = -1;
  dropoffs.forEach((dropoff, k) => {
    if (dropoff !== null && dropoff > 0 && (highestAt < 0 || dropoff > (dropoffs[highestAt] ?? 0)))
      highestAt = k;
  });
  return names.map((eventName, k) => {
    const dropoff = dropoffs[k] ?? null;
    return {
      step: k + 1,
      eventName,
      users: users[k] ?? 0,
      conversionRateFromStart: percent(users[k] ?? 0, users[0] ?? 0),
      dropoffCount: dropoff,
      dropoffPercent: dropoff === null ? null : percent(dropoff, users[k] ?? 0),
      isHighestDropoff: k === highestAt,
    };
  });
}

/** Days since 1970-01-01 of an instant's local calendar day in `timezone`. */
export function localDayNumber(at: number, timezone: string): number {
  const text = new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(new Date(at));
  return Math.round(Date.parse(`${text}T00:00:00Z`) / 86_400_000);
}

/** `/engagement`'s distribution: identified users by local days from their last identified event to `referenceDay`. */
export function referenceEngagement(
  events: RawEvent[],
  scope: {
    projectId: string;
    start?: number;
    end?: number;
    timezone: string;
    filters?: RawFilter[];
    referenceDay: number;
  },
) {
  const last = new Map<string, number>();
  for (const event of events) {
    const at = event.createdAt.getTime();
    if (event.projectId !== scope.projectId || event.profileId === event.deviceId) continue;
    if ((scope.start !== undefined && at < scope.start) || (scope.end !== undefined && at >= scope.end))
      continue;
    if (!eventPasses(event, scope.filters ?? [])) continue;
    last.set(event.profileId, Math.max(last.get(event.profileId) ?? at, at));
  }
  const byDays = new Map<number, number>();
  for (const at of last.values()) {
    const days = scope.referenceDay - localDayNumber(at, scope.timezone);
    byDays.set(days, (byDays.get(days) ?? 0) + 1);
  }
  return [...byDays.entries()].sort((a, b) => a[0] - b[0]).map(([days, users]) => ({ days, users }));
}

/** `/active_users`: for each local day D of [firstDay, lastDay], the users with an event on D − days + 1 … D. */
export function referenceActiveUsers(
  events: RawEvent[],
  scope: {
    projectId: string;
    timezone: string;
    days: number;
    firstDay: number;
    lastDay: number;
    identified?: boolean;
    filters?: RawFilter[];
  },
): Array<{ date: string; users: number }> {
  const activeDays = events
    .filter(
      (event) =>
        event.projectId === scope.projectId &&
        (!scope.identified || event.profileId !== event.deviceId) &&
        eventPasses(event, scope.filters ?? []),
    )
    .map((event) => ({
      profile: event.profileId,
      day: localDayNumber(event.createdAt.getTime(), scope.timezone),
    }));
  const series: Array<{ date: string; users: number }> = [];
  for (let day = scope.firstDay; day <= scope.lastDay; day++) {
    const users = new Set(
      activeDays
        .filter((active) => active.day <= day && active.day > day - scope.days)
        .map((active) => active.profile),
    );
    series.push({ date: new Date(day * 86_400_000).toISOString().slice(0, 10), users: users.size });
  }
  return series;
}

/** The local Monday week of an instant: (local day number + 3) div 7 (1970-01-01 was a Thursday). */
export const localWeek = (at: number, timezone: string) => Math.floor((localDayNumber(at, timezone) + 3) / 7);
const mondayOf = (week: number) => new Date((week * 7 - 3) * 86_400_000).toISOString().slice(0, 10);
const round2 = (value: number) => Math.round(value * 100) / 100;

/** Each identified user's active weeks (events that pass the filters, before `until`). */
function weeksByUser(
  events: RawEvent[],
  scope: { projectId: string; timezone: string; until: number; filters?: RawFilter[] },
) {
  const weeks = new Map<string, Set<number>>();
  for (const event of events) {
    const at = event.createdAt.getTime();
    if (event.projectId !== scope.projectId || event.profileId === event.deviceId || at >= scope.until)
      continue;
    if (!eventPasses(event, scope.filters ?? [])) continue;
    weeks.set(event.profileId, (weeks.get(event.profileId) ?? new Set()).add(localWeek(at, scope.timezone)));
  }
  return weeks;
}

/** `/retention/cohort`: the Weighted Average row, then one row per week of [firstWeek, lastWeek]. */
export function referenceCohorts(
  events: RawEvent[],
  scope: {
    projectId: string;
    timezone: string;
    firstWeek: number;
    lastWeek: number;
    currentWeek: number;
    until: number;
    criteria: "on" | "on_or_after";
    filters?: RawFilter[];
  },
) {
  const byUser = weeksByUser(events, scope);
  const size = scope.lastWeek - scope.firstWeek + 1;
  const rows = [];
  for (let cohort = scope.firstWeek; cohort <= scope.lastWeek; cohort++) {
    const members = [...byUser.values()].filter((weeks) => Math.min(...weeks) === cohort);
    const observed = Math.max(0, Math.min(size, Math.min(scope.lastWeek, scope.currentWeek) - cohort + 1));
    const values = Array.from({ length: size }, (_, k) => {
      if (k >= observed) return 0;
      return members.filter((weeks) =>
        scope.criteria === "on"
          ? weeks.has(cohort + k)
          : [...weeks].some((week) => week >= cohort + k && week <= scope.lastWeek),
      ).length;
    });
    rows.push({
      cohort_interval: mondayOf(cohort),
      sum: members.length,
      values,
      percentages: values.map((users) => (members.length === 0 ? 0 : round2(users / members.length))),
      observed,
    });
  }
  const filled = rows.filter((row) => row.sum > 0);
  const mean = filled.length ? filled.reduce((s, row) => s + row.sum, 0) / filled.length : 0;
  const rate = (k: number) => {
    const pool = filled.filter((row) => k < row.observed);
    const members = pool.reduce((s, row) => s + row.sum, 0);
    return {
      used: pool.length > 0,
      rate: members ? pool.reduce((s, row) => s + (row.values[k] ?? 0), 0) / members : 0,
    };
  };
  const rates = Array.from({ length: size }, (_, k) => rate(k));
  return [
    {
      cohort_interval: "Weighted Average",
      sum: Math.round(mean),
      values: rates.map((r) => Math.round(r.rate * mean)),
      percentages: rates.map((r) => round2(r.rate)),
      observed: rates.filter((r) => r.used).length,
    },
    ...rows,
  ];
}

/** `/retention`: per week of [firstWeek, lastWeek], its identified users and those back the week after. */
export function referenceWeeklyReturn(
  events: RawEvent[],
  scope: {
    projectId: string;
    timezone: string;
    firstWeek: number;
    lastWeek: number;
    currentWeek: number;
    filters?: RawFilter[];
  },
) {
  const byUser = weeksByUser(events, { ...scope, until: Number.POSITIVE_INFINITY });
  const rows = [];
  for (let week = scope.firstWeek; week <= scope.lastWeek; week++) {
    const active = [...byUser.values()].filter((weeks) => weeks.has(week));
    const retained = week + 1 <= scope.currentWeek ? active.filter((weeks) => weeks.has(week + 1)).length : 0;
    rows.push({
      date: mondayOf(week),
      active_users: active.length,
      retained_users: retained,
      retention: active.length ? Math.round((10_000 * retained) / active.length) / 100 : 0,
      complete: week + 1 < scope.currentWeek,
    });
  }
  return rows;
}

export interface FlowReferenceScope {
  projectId: string;
  start: number;
  end: number;
  filters?: RawFilter[];
  mode: "after" | "before" | "between";
  startEvent: string;
  endEvent?: string;
  steps: number;
  include?: string[];
  exclude?: string[];
  paths?: boolean;
  maxLabels: number;
}

const FLOW_COLORS = [
  "#2563eb",
  "#16a34a",
  "#f59e0b",
  "#dc2626",
  "#7c3aed",
  "#0891b2",
  "#db2777",
  "#65a30d",
  "#ea580c",
  "#4b5563",
];

/** `/user_flow` as contract A7 constructs it, step by step, over each session's raw events. */
export function referenceUserFlow(events: RawEvent[], scope: FlowReferenceScope) {
  const bySession = new Map<string, RawEvent[]>();
  for (const event of events) {
    const at = event.createdAt.getTime();
    if (event.projectId !== scope.projectId || at < scope.start || at >= scope.end) continue;
    if (!eventPasses(event, scope.filters ?? [])) continue;
    bySession.set(event.sessionId, [...(bySession.get(event.sessionId) ?? []), event]);
  }
  const anchors = [scope.startEvent, ...(scope.mode === "between" && scope.endEvent ? [scope.endEvent] : [])];
  const cuts: Array<Array<{ step: number; label: string }>> = [];
  let skipped = 0;
  for (const list of bySession.values()) {
    let labels = [...list]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map((event) =>
        scope.paths && event.name === "screen_view" ? event.path || "screen_view" : event.name,
      );
    if (scope.include?.length)
      labels = labels.filter((l) => scope.include?.includes(l) || anchors.includes(l));
    else if (scope.exclude?.length)
      labels = labels.filter((l) => !scope.exclude?.includes(l) || anchors.includes(l));
    labels = labels.filter((label, i) => i === 0 || labels[i - 1] !== label);
    const anchor = labels.indexOf(scope.startEvent);
    if (anchor < 0) continue;
    let cut: string[];
    let firstStep = 1;
    if (scope.mode === "after") cut = labels.slice(anchor, anchor + scope.steps);
    else if (scope.mode === "before") {
      cut = labels.slice(Math.max(0, anchor - scope.steps + 1), anchor + 1);
      firstStep = scope.steps - cut.length + 1;
    } else {
      const finish = labels.findIndex((label, i) => i > anchor && label === scope.endEvent);
      if (finish < 0) continue;
      cut = labels.slice(anchor, finish + 1);
      if (cut.length > scope.steps) {
        skipped++;
        continue;
      }
    }
    if (cut.length < 2) continue;
    cuts.push(cut.map((label, i) => ({ step: firstStep + i, label })));
  }
  const frequency = new Map<string, number>();
  for (const cut of cuts)
    for (const label of new Set(cut.map((c) => c.label)))
      frequency.set(label, (frequency.get(label) ?? 0) + 1);
  const ranked = [...frequency.entries()].sort(
    (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0),
  );
  const top = ranked.slice(0, scope.maxLabels).map(([label]) => label);
  const shown = (label: string) => (top.includes(label) ? label : "(other)");
  const nodes = new Map<string, { label: string; step: number; value: number }>();
  const links = new Map<string, { source: string; target: string; step: number; value: number }>();
  for (const cut of cuts) {
    cut.forEach(({ step, label }, i) => {
      const id = `${shown(label)}::step${step}`;
      const node = nodes.get(id) ?? { label: shown(label), step, value: 0 };
      node.value++;
      nodes.set(id, node);
      const next = cut[i + 1];
      if (next) {
        const target = `${shown(next.label)}::step${next.step}`;
        const link = links.get(`${id}>${target}`) ?? { source: id, target, step, value: 0 };
        link.value++;
        links.set(`${id}>${target}`, link);
      }
    });
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const nodeRows = [...nodes.entries()]
    .map(([id, node]) => ({
      id,
      label: node.label,
      nodeColor: top.includes(node.label) ? (FLOW_COLORS[top.indexOf(node.label) % 10] as string) : "#9ca3af",
      percentage: cuts.length ? Math.round((10_000 * node.value) / cuts.length) / 100 : 0,
      value: node.value,
      step: node.step,
    }))
    .sort((a, b) => a.step - b.step || b.value - a.value || order(a.label, b.label));
  const linkRows = [...links.values()]
    .sort(
      (a, b) =>
        a.step - b.step || b.value - a.value || order(a.source, b.source) || order(a.target, b.target),
    )
    .map(({ source, target, value }) => ({ source, target, value }));
  return {
    mode: scope.mode,
    startEvent: scope.startEvent,
    endEvent: scope.mode === "between" ? (scope.endEvent ?? null) : null,
    paths: scope.paths ?? false,
    totalSessions: cuts.length,
    skippedSessions: skipped,
    node_count: nodeRows.length,
    link_count: linkRows.length,
    nodes: nodeRows,
    links: linkRows,
  };
}
