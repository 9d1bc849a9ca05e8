import { eventPasses, type RawEvent, type RawFilter } from "./reference";

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
