import type { RawEvent } from "./reference";

/**
 * Small, deterministic, deliberately awkward traffic for differential tests: nulls and empty
 * strings, LIKE metacharacters, numeric and non-numeric properties, bounces, revenue, sessions
 * that straddle bucket and day edges. Timestamps inside a session are distinct, so "first event"
 * is never ambiguous.
 */

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PAGES: Array<[string | null, string, string | null]> = [
  ["https://example.com", "/", "Home"],
  ["https://example.com", "/pricing", "Pricing"],
  ["https://example.com", "/docs/getting-started", "Getting started"],
  ["https://example.com", "/100%_off", "Sale"],
  ["https://shop.example.com", "/", "Shop"],
  ["https://shop.example.com", "/cart", null],
  [null, "/app", "App"],
];
const REFERRERS: Array<[string | null, string | null, string | null]> = [
  [null, null, null],
  ["", "", ""],
  ["https://www.google.com/", "Google", "search"],
  ["https://duckduckgo.com/", "DuckDuckGo", "search"],
  ["https://twitter.com/", "Twitter", "social"],
  ["https://blog.example.org/post_1", "blog.example.org", "link"],
];
const GEO: Array<[string | null, string | null, string | null]> = [
  ["NO", "Oslo", "Oslo"],
  ["NO", "Vestland", "Bergen"],
  ["SE", "Stockholm", "Stockholm"],
  ["US", "California", "San Francisco"],
  ["US", "New York", "New York"],
  [null, null, null],
];
const TECH: Array<[string, string | null, string | null, string, string, string, string]> = [
  ["desktop", "Apple", "Macintosh", "Safari", "17.4", "macOS", "14.4"],
  ["desktop", null, null, "Chrome", "124.0", "Windows", "11"],
  ["mobile", "Apple", "iPhone", "Safari", "17.4", "iOS", "17.4"],
  ["mobile", "Samsung", "Galaxy S24", "Chrome", "123.0", "Android", "14"],
  ["tablet", "Apple", "iPad", "Safari", "16.6", "iOS", "16.6"],
];
const UTM: Array<[string | null, string | null, string | null, string | null, string | null]> = [
  [null, null, null, null, null],
  ["newsletter", "email", "spring_sale", null, "header"],
  ["google", "cpc", "brand", "analytics api", "ad-1"],
];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)] as T;
}

export interface TrafficOptions {
  projectId: string;
  seed: number;
  sessions: number;
  /** Sessions start uniformly in [from, to). */
  from: number;
  to: number;
}

export function generateTraffic(options: TrafficOptions): RawEvent[] {
  const random = prng(options.seed);
  const events: RawEvent[] = [];
  const visitors = Math.max(1, Math.floor(options.sessions * 0.6));
  for (let s = 0; s < options.sessions; s++) {
    const visitor = Math.floor(random() * visitors);
    const deviceId = `dev-${options.seed}-${visitor}`;
    const profileId = visitor % 3 === 0 ? `user-${visitor}` : deviceId;
    const sessionId = `ses-${options.seed}-${s}`;
    const [referrer, referrerName, referrerType] = pick(random, REFERRERS);
    const [country, region, city] = pick(random, GEO);
    const [device, brand, model, browser, browserVersion, os, osVersion] = pick(random, TECH);
    const [utmSource, utmMedium, utmCampaign, utmTerm, utmContent] = pick(random, UTM);
    const shared = {
      projectId: options.projectId,
      sessionId,
      deviceId,
      country,
      region,
      city,
      device,
      brand,
      model,
    };
    const tech = { browser, browserVersion, os, osVersion };
    let at = options.from + Math.floor(random() * (options.to - options.from));
    const count = random() < 0.35 ? 1 : 2 + Math.floor(random() * 5);
    for (let e = 0; e < count; e++) {
      const isView = e === 0 || random() < 0.7;
      const [origin, path, title] = pick(random, PAGES);
      const gap = 1_000 + Math.floor(random() * 600_000);
      const purchase = !isView && random() < 0.3;
      events.push({
        ...shared,
        ...tech,
        // Later events of a session may change profile and attributes; sessions keep the first's.
        profileId: e > 0 && random() < 0.1 ? `user-late-${visitor}` : profileId,
        name: isView ? "screen_view" : purchase ? "purchase" : pick(random, ["signup", "button_click"]),
        createdAt: new Date(at),
        path: isView ? path : pick(random, [path, null]),
        origin: isView ? origin : null,
        title: isView ? title : null,
        referrer: e === 0 ? referrer : null,
        referrerName: e === 0 ? referrerName : null,
        referrerType: e === 0 ? referrerType : null,
        utmSource: e === 0 ? utmSource : null,
        utmMedium: e === 0 ? utmMedium : null,
        utmCampaign: e === 0 ? utmCampaign : null,
        utmTerm: e === 0 ? utmTerm : null,
        utmContent: e === 0 ? utmContent : null,
        duration: isView && e < count - 1 ? Math.min(gap, 300_000) : 0,
        // About one screen view in 50 carries revenue too (page rows sum it), taken from the gap so
        // the random sequence, and so every other value, stays as it was.
        revenue: purchase
          ? 100 + Math.floor(random() * 9_900)
          : isView && gap % 50 === 7
            ? 100 + (gap % 900)
            : 0,
        properties: isView
          ? {}
          : {
              plan: pick(random, ["free", "pro", "pro_plus", "100%"]),
              price: pick(random, [0, 9, 49, "49", "n/a"]),
              nested: { variant: pick(random, ["A", "B"]) },
            },
      });
      at += gap;
    }
  }
  return events;
}

/** A deterministic shuffle, so later batches carry earlier events of the sessions (late arrivals). */
export function shuffled<T>(items: T[], seed: number): T[] {
  const copy = [...items];
  let state = seed;
  for (let i = copy.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
