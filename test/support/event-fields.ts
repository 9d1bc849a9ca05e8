import type { RawEvent } from "./reference";

/**
 * Field names of contract section 3 mapped to the raw events the tests insert, for the two test
 * references. Written from the contract, independently of src/ (the SQL path has its own map).
 */
export const FIELD_KEYS: Readonly<Record<string, keyof RawEvent>> = {
  name: "name",
  path: "path",
  origin: "origin",
  referrer: "referrer",
  referrer_name: "referrerName",
  referrer_type: "referrerType",
  country: "country",
  region: "region",
  city: "city",
  device: "device",
  brand: "brand",
  model: "model",
  browser: "browser",
  browser_version: "browserVersion",
  os: "os",
  os_version: "osVersion",
  utm_source: "utmSource",
  utm_medium: "utmMedium",
  utm_campaign: "utmCampaign",
  utm_term: "utmTerm",
  utm_content: "utmContent",
  profile_id: "profileId",
  device_id: "deviceId",
  session_id: "sessionId",
  duration: "duration",
  revenue: "revenue",
};

/** Fields of the event itself; every other field is a session attribute (contract section 3). */
export const EVENT_FIELD_NAMES: ReadonlySet<string> = new Set([
  "name",
  "path",
  "origin",
  "duration",
  "revenue",
]);

export const NUMERIC_FIELD_NAMES: ReadonlySet<string> = new Set(["duration", "revenue"]);

/** `referrerName` → `referrer_name`: the camelCase spellings the contract accepts. */
export const snakeCase = (name: string): string =>
  name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
