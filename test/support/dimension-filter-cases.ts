import type { FilterInput } from "./filter-input";

/** Filters on one breakdown dimension that the rollups answer, over the data of test/support/traffic.ts. */

export const is = (name: string, operator: string, value?: unknown[]): FilterInput => ({
  name,
  operator,
  value,
});

/** One of each operator the rollups answer, on dimensions with and without a prefix. */
export const COVERED_FILTERS: Array<[string, FilterInput]> = [
  ["country is NO", is("country", "is", ["NO"])],
  ["country is one of two", is("country", "is", ["NO", "SE"])],
  ["country isNot US (and not set)", is("country", "isNot", ["US"])],
  ["referrer_name isNot Google, with empty strings in the data", is("referrer_name", "isNot", ["Google"])],
  ["referrer_name contains oo", is("referrer_name", "contains", ["oo"])],
  ["referrer_name doesNotContain oo", is("referrer_name", "doesNotContain", ["oo"])],
  ["city startsWith S", is("city", "startsWith", ["S"])],
  ["os endsWith S", is("os", "endsWith", ["S"])],
  ["region isNull", is("region", "isNull")],
  ["utm_source isNotNull", is("utm_source", "isNotNull")],
  ["browser_version gt 100, numbers compared as numbers", is("browser_version", "gt", [100])],
  ["region is Oslo, a dimension with a prefix", is("region", "is", ["Oslo"])],
];

/**
 * Filters on the sessions' paths and event names that the rollups answer (`is` one value). "/" is
 * on two origins, and other events of a session carry it without one: a session must count once
 * under it; a session holds "screen_view" once per screen view.
 */
export const MULTI_VALUED_FILTERS: Array<[string, FilterInput]> = [
  ["path is /pricing", is("path", "is", ["/pricing"])],
  ["path is /, on two origins and without one", is("path", "is", ["/"])],
  ["name is purchase", is("name", "is", ["purchase"])],
  ["name is screen_view, many per session", is("name", "is", ["screen_view"])],
];
