import { eventPasses, type RawEvent, type RawFilter, type RefScope, sessionsInScope } from "./reference";

/**
 * The reference for the listings (contract A3), in plain TypeScript over the raw events a test
 * inserted: which events a listing holds, in which order, and each row as the contract shows it.
 */

/** An inserted event with the id the test gave it. */
export type ListedEvent = RawEvent & { id: string };

/** Properties as the contract flattens them: dotted keys, set leaves only, each as its text. */
export function flattenProperties(value: unknown, prefix = ""): Record<string, string> {
  const flat: Record<string, string> = {};
  const visit = (node: unknown, key: string) => {
    if (node === null || node === undefined || node === "") return;
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, key ? `${key}.${index}` : String(index));
    } else if (typeof node === "object") {
      for (const [child, item] of Object.entries(node)) visit(item, key ? `${key}.${child}` : child);
    } else {
      flat[key] = typeof node === "string" ? node : JSON.stringify(node);
    }
  };
  visit(value, prefix);
  return flat;
}

export function eventRow(event: ListedEvent) {
  return {
    id: event.id,
    name: event.name,
    device_id: event.deviceId,
    profile_id: event.profileId,
    project_id: event.projectId,
    session_id: event.sessionId,
    created_at: event.createdAt.toISOString(),
    path: event.path,
    origin: event.origin,
    title: event.title,
    referrer: event.referrer,
    referrer_name: event.referrerName,
    referrer_type: event.referrerType,
    duration: event.duration,
    revenue: event.revenue,
    properties: flattenProperties(event.properties),
    country: event.country,
    region: event.region,
    city: event.city,
    latitude: null,
    longitude: null,
    device: event.device,
    brand: event.brand,
    model: event.model,
    browser: event.browser,
    browser_version: event.browserVersion,
    os: event.os,
    os_version: event.osVersion,
    utm_source: event.utmSource,
    utm_medium: event.utmMedium,
    utm_campaign: event.utmCampaign,
    utm_term: event.utmTerm,
    utm_content: event.utmContent,
    imported_at: null,
    sdk_name: null,
    sdk_version: null,
    groups: [],
  };
}

/** `/events`: the project's events of [start, end) with one of `names` (all when empty) passing every filter, newest first. */
export function referenceEventRows(
  events: ListedEvent[],
  scope: { projectId: string; start: number; end: number; names?: string[]; filters?: RawFilter[] },
) {
  return events
    .filter(
      (event) =>
        event.projectId === scope.projectId &&
        event.createdAt.getTime() >= scope.start &&
        event.createdAt.getTime() < scope.end &&
        (!scope.names?.length || scope.names.includes(event.name)) &&
        eventPasses(event, scope.filters ?? []),
    )
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map(eventRow);
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `/sessions`: the scope's sessions (first event in the window, filters as section 3), newest first, as rows. */
export function referenceSessionRows(events: RawEvent[], scope: RefScope) {
  return sessionsInScope(events, scope)
    .sort((a, b) => b.start - a.start || byteOrder(b.id, a.id))
    .map((session) => {
      const views = session.events.filter((event) => event.name === "screen_view");
      const first = session.first;
      const last = session.events.at(-1) ?? first;
      return {
        id: session.id,
        profile_id: first.profileId,
        device_id: first.deviceId,
        project_id: first.projectId,
        duration: session.durationMs,
        created_at: new Date(session.start).toISOString(),
        ended_at: last.createdAt.toISOString(),
        event_count: session.events.length,
        screen_view_count: views.length,
        is_bounce: session.bounce,
        entry_path: views[0]?.path ?? null,
        entry_origin: views[0]?.origin ?? null,
        exit_path: views.at(-1)?.path ?? null,
        exit_origin: views.at(-1)?.origin ?? null,
        referrer: first.referrer,
        referrer_name: first.referrerName,
        referrer_type: first.referrerType,
        utm_source: first.utmSource,
        utm_medium: first.utmMedium,
        utm_campaign: first.utmCampaign,
        utm_term: first.utmTerm,
        utm_content: first.utmContent,
        country: first.country,
        region: first.region,
        city: first.city,
        latitude: null,
        longitude: null,
        device: first.device,
        brand: first.brand,
        model: first.model,
        browser: first.browser,
        browser_version: first.browserVersion,
        os: first.os,
        os_version: first.osVersion,
        revenue: session.revenue,
        groups: [],
      };
    });
}
