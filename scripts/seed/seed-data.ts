import { once } from "node:events";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { DEMO_PROJECTS, ensureDemoFixtures } from "./demo-fixtures";
import { hash32, hashString, pickWeighted, Rng, type WeightTable, weightTable } from "./random";

/**
 * Deterministic demo traffic (CONTRACT section 11), streamed into Postgres with COPY.
 *
 * Rows are generated straight into COPY text (no per-event objects), hour by hour: each hour gets
 * its share of the events (daily rhythm, weekly pattern, a mild upward trend), its sessions get
 * sorted start times, and each session goes to a visitor of the project's pool that has been idle
 * for more than 30 minutes, so the 30-minute session rule holds for every visitor. Memory is
 * bounded by one hour of sessions plus a few numbers per visitor.
 *
 * Determinism: the traffic depends on `seed` only; ids (events, sessions) on `seed` and `now`, so
 * the same seed and `now` give identical rows and a rerun at another moment never collides.
 */

export interface SeedOptions {
  events: number;
  days: number;
  seed: number;
  reset: boolean;
  now?: Date;
  projects?: string[];
  onProgress?: (loaded: number, total: number) => void;
  /** Called when a slow step after the load starts (for progress messages). */
  onPhase?: (phase: "indexes" | "sessions") => void;
}

export interface SeedResult {
  events: number;
  sessions: number;
  profiles: number;
  millis: number;
  /** Generating and loading the rows (COPY, index rebuild, commit). */
  loadMillis?: number;
  /**
   * The part of `loadMillis` spent rebuilding the events indexes (0 when they were kept): the
   * primary key; the others are built after the load (`lateIndexMillis`).
   */
  indexMillis?: number;
  /**
   * Wall time after the load: refresh_derived() (with ANALYZE of the loaded tables alongside, and
   * the events indexes not built during the load).
   */
  deriveMillis?: number;
  /** The part of `deriveMillis` spent in refresh_derived() itself (with the sessions indexes). */
  refreshMillis?: number;
  /** Events indexes built after the load, alongside refresh_derived() (0 when there were none). */
  lateIndexMillis?: number;
}

/** The projects that receive events by default, and their share of them. */
export const DEFAULT_PROJECT_SHARES: ReadonlyArray<readonly [string, number]> = [
  ["demo", 0.8],
  ["demo-2", 0.1],
  ["other", 0.1],
];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A visitor starts a new session only after more than this much idle time (with a margin). */
const SESSION_IDLE_MS = 30 * MINUTE + 5_000;
/** Gaps inside a session stay well below 30 minutes. */
const MAX_GAP_MS = 25 * MINUTE;

// ---------------------------------------------------------------------------------------------
// COPY text format

const COPY_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "\t": "\\t",
  "\n": "\\n",
  "\r": "\\r",
};
const NEEDS_ESCAPE = /[\\\t\n\r]/;
const NULL = "\\N";

/** One value in PostgreSQL's COPY text format (`\N` for null; backslash, tab, CR and LF escaped). */
export function copyText(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return NULL;
  const text = String(value);
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] ?? c) : text;
}

// ---------------------------------------------------------------------------------------------
// Catalogs

interface Place {
  country: string;
  region: string;
  city: string;
  latitude: number;
  longitude: number;
}

const place = (
  country: string,
  region: string,
  city: string,
  latitude: number,
  longitude: number,
): Place => ({
  country,
  region,
  city,
  latitude,
  longitude,
});

const PLACES = weightTable<Place>([
  [place("US", "California", "San Francisco", 37.7749, -122.4194), 6],
  [place("US", "California", "Los Angeles", 34.0522, -118.2437), 4],
  [place("US", "New York", "New York", 40.7128, -74.006), 7],
  [place("US", "Texas", "Austin", 30.2672, -97.7431), 3],
  [place("US", "Washington", "Seattle", 47.6062, -122.3321), 3],
  [place("US", "Illinois", "Chicago", 41.8781, -87.6298), 3],
  [place("US", "Massachusetts", "Boston", 42.3601, -71.0589), 2],
  [place("CA", "Ontario", "Toronto", 43.6532, -79.3832), 3],
  [place("CA", "British Columbia", "Vancouver", 49.2827, -123.1207), 2],
  [place("GB", "England", "London", 51.5074, -0.1278), 7],
  [place("GB", "England", "Manchester", 53.4808, -2.2426), 2],
  [place("GB", "Scotland", "Edinburgh", 55.9533, -3.1883), 1],
  [place("DE", "Berlin", "Berlin", 52.52, 13.405), 5],
  [place("DE", "Bavaria", "Munich", 48.1351, 11.582), 3],
  [place("DE", "Hamburg", "Hamburg", 53.5511, 9.9937), 2],
  [place("FR", "Île-de-France", "Paris", 48.8566, 2.3522), 4],
  [place("NL", "North Holland", "Amsterdam", 52.3676, 4.9041), 3],
  [place("NO", "Oslo", "Oslo", 59.9139, 10.7522), 4],
  [place("NO", "Vestland", "Bergen", 60.3913, 5.3221), 2],
  [place("NO", "Trøndelag", "Trondheim", 63.4305, 10.3951), 1],
  [place("SE", "Stockholm", "Stockholm", 59.3293, 18.0686), 3],
  [place("SE", "Västra Götaland", "Gothenburg", 57.7089, 11.9746), 1],
  [place("DK", "Capital Region", "Copenhagen", 55.6761, 12.5683), 2],
  [place("FI", "Uusimaa", "Helsinki", 60.1699, 24.9384), 1],
  [place("ES", "Madrid", "Madrid", 40.4168, -3.7038), 2],
  [place("IT", "Lombardy", "Milan", 45.4642, 9.19), 2],
  [place("PL", "Masovia", "Warsaw", 52.2297, 21.0122), 2],
  [place("IN", "Maharashtra", "Mumbai", 19.076, 72.8777), 4],
  [place("IN", "Karnataka", "Bengaluru", 12.9716, 77.5946), 4],
  [place("IN", "Delhi", "New Delhi", 28.6139, 77.209), 3],
  [place("BR", "São Paulo", "São Paulo", -23.5505, -46.6333), 3],
  [place("BR", "Rio de Janeiro", "Rio de Janeiro", -22.9068, -43.1729), 1],
  [place("MX", "Mexico City", "Mexico City", 19.4326, -99.1332), 1],
  [place("JP", "Tokyo", "Tokyo", 35.6762, 139.6503), 3],
  [place("JP", "Osaka", "Osaka", 34.6937, 135.5023), 1],
  [place("KR", "Seoul", "Seoul", 37.5665, 126.978), 1],
  [place("SG", "Singapore", "Singapore", 1.3521, 103.8198), 1],
  [place("AU", "New South Wales", "Sydney", -33.8688, 151.2093), 2],
  [place("AU", "Victoria", "Melbourne", -37.8136, 144.9631), 1],
]);

/** country\tregion\tcity\tlatitude\tlongitude, escaped. */
const PLACE_BLOCKS = new Map<Place, string>(
  PLACES.items.map((p) => [
    p,
    [p.country, p.region, p.city, p.latitude, p.longitude].map((v) => copyText(v)).join("\t"),
  ]),
);

interface Browser {
  name: string;
  versions: readonly string[];
}

const CHROME: Browser = {
  name: "Chrome",
  versions: ["126.0.0.0", "127.0.0.0", "128.0.0.0", "129.0.0.0", "130.0.0.0"],
};
const FIREFOX: Browser = { name: "Firefox", versions: ["128.0", "130.0", "131.0", "132.0"] };
const EDGE: Browser = { name: "Edge", versions: ["127.0.2651.74", "128.0.2739.42", "129.0.2792.52"] };
const SAFARI: Browser = { name: "Safari", versions: ["17.5", "17.6", "18.0", "18.1"] };
const MOBILE_SAFARI: Browser = { name: "Mobile Safari", versions: ["17.5", "17.6", "18.0", "18.1"] };
const CHROME_MOBILE: Browser = { name: "Chrome Mobile", versions: ["127.0.6533.103", "128.0.6613.127"] };
const CHROME_IOS: Browser = { name: "Chrome iOS", versions: ["127.0.6533.107", "128.0.6613.98"] };
const SAMSUNG_INTERNET: Browser = { name: "Samsung Internet", versions: ["25.0", "26.0"] };
const MIUI_BROWSER: Browser = { name: "MIUI Browser", versions: ["14.10.0", "18.2.0"] };

type DeviceKind = "desktop" | "mobile" | "tablet";

interface DeviceProfile {
  device: DeviceKind;
  brand: string | null;
  models: ReadonlyArray<string | null>;
  os: string;
  osVersions: ReadonlyArray<string | null>;
  browsers: WeightTable<Browser>;
}

const profile = (
  device: DeviceKind,
  brand: string | null,
  models: ReadonlyArray<string | null>,
  os: string,
  osVersions: ReadonlyArray<string | null>,
  browsers: ReadonlyArray<readonly [Browser, number]>,
): DeviceProfile => ({ device, brand, models, os, osVersions, browsers: weightTable(browsers) });

const DEVICE_PROFILES = weightTable<DeviceProfile>([
  [
    profile(
      "desktop",
      null,
      [null],
      "Windows",
      ["10", "11", "11"],
      [
        [CHROME, 60],
        [EDGE, 25],
        [FIREFOX, 15],
      ],
    ),
    30,
  ],
  [
    profile(
      "desktop",
      "Apple",
      ["Macintosh"],
      "macOS",
      ["14.5", "14.6", "15.0", "15.1"],
      [
        [CHROME, 45],
        [SAFARI, 38],
        [FIREFOX, 12],
        [EDGE, 5],
      ],
    ),
    19,
  ],
  [
    profile(
      "desktop",
      null,
      [null],
      "Linux",
      [null],
      [
        [CHROME, 45],
        [FIREFOX, 55],
      ],
    ),
    4,
  ],
  [profile("desktop", null, [null], "Chrome OS", ["126.0.0", "128.0.0"], [[CHROME, 1]]), 2],
  [
    profile(
      "mobile",
      "Apple",
      ["iPhone 15", "iPhone 15 Pro", "iPhone 14", "iPhone 13", "iPhone SE"],
      "iOS",
      ["17.5", "17.6", "18.0", "18.1"],
      [
        [MOBILE_SAFARI, 85],
        [CHROME_IOS, 15],
      ],
    ),
    19,
  ],
  [
    profile(
      "mobile",
      "Samsung",
      ["Galaxy S24", "Galaxy S23", "Galaxy A54", "Galaxy A34"],
      "Android",
      ["13", "14"],
      [
        [CHROME_MOBILE, 65],
        [SAMSUNG_INTERNET, 35],
      ],
    ),
    9,
  ],
  [
    profile(
      "mobile",
      "Google",
      ["Pixel 8", "Pixel 8 Pro", "Pixel 7a"],
      "Android",
      ["14", "15"],
      [[CHROME_MOBILE, 1]],
    ),
    4,
  ],
  [
    profile(
      "mobile",
      "Xiaomi",
      ["Redmi Note 12", "Redmi Note 13", "14"],
      "Android",
      ["13", "14"],
      [
        [CHROME_MOBILE, 80],
        [MIUI_BROWSER, 20],
      ],
    ),
    3,
  ],
  [profile("mobile", "OnePlus", ["OnePlus 12", "Nord 3"], "Android", ["14"], [[CHROME_MOBILE, 1]]), 2],
  [
    profile(
      "tablet",
      "Apple",
      ["iPad Air", "iPad Pro 11", "iPad"],
      "iOS",
      ["17.5", "17.6", "18.1"],
      [
        [MOBILE_SAFARI, 90],
        [CHROME_IOS, 10],
      ],
    ),
    5,
  ],
  [
    profile(
      "tablet",
      "Samsung",
      ["Galaxy Tab S9", "Galaxy Tab A8"],
      "Android",
      ["13", "14"],
      [
        [CHROME_MOBILE, 60],
        [SAMSUNG_INTERNET, 40],
      ],
    ),
    2,
  ],
]);

for (const kind of DEVICE_PROFILES.items) {
  const strings = [kind.device, kind.brand, kind.os, ...kind.models, ...kind.osVersions];
  for (const browser of kind.browsers.items) strings.push(browser.name, ...browser.versions);
  if (strings.some((v) => v !== null && NEEDS_ESCAPE.test(v)))
    throw new Error("device catalog needs escaping");
}

type EntryKind = "direct" | "search" | "social" | "link" | "email" | "paid";

interface Channel {
  referrer: string | null;
  name: string | null;
  type: string | null;
  entry: EntryKind;
  /** Share of this channel's sessions that see one page only. */
  bounce: number;
}

const channel = (
  referrer: string | null,
  name: string | null,
  type: string | null,
  entry: EntryKind,
  bounce: number,
): Channel => ({ referrer, name, type, entry, bounce });

const DIRECT = channel(null, null, null, "direct", 0.36);
const GOOGLE = channel("https://www.google.com/", "Google", "search", "search", 0.44);
const BING = channel("https://www.bing.com/", "Bing", "search", "search", 0.44);
const DUCKDUCKGO = channel("https://duckduckgo.com/", "DuckDuckGo", "search", "search", 0.42);
const TWITTER = channel("https://t.co/", "Twitter", "social", "social", 0.58);
const FACEBOOK = channel("https://www.facebook.com/", "Facebook", "social", "social", 0.56);
const LINKEDIN = channel("https://www.linkedin.com/", "LinkedIn", "social", "social", 0.5);
const REDDIT = channel("https://www.reddit.com/r/analytics/", "Reddit", "social", "social", 0.55);
const HACKER_NEWS = channel("https://news.ycombinator.com/", "Hacker News", "link", "link", 0.52);
const DEV_TO = channel("https://dev.to/", "DEV Community", "link", "link", 0.48);
const CSS_TRICKS = channel("https://css-tricks.com/", "CSS-Tricks", "link", "link", 0.46);
const SMASHING = channel("https://www.smashingmagazine.com/", "Smashing Magazine", "link", "link", 0.46);
const GMAIL = channel("https://mail.google.com/", "Gmail", "email", "email", 0.34);
const OUTLOOK = channel("https://outlook.live.com/", "Outlook", "email", "email", 0.34);

const ORGANIC_CHANNELS = weightTable<Channel>([
  [DIRECT, 34],
  [GOOGLE, 30],
  [BING, 4],
  [DUCKDUCKGO, 3],
  [TWITTER, 4],
  [FACEBOOK, 3],
  [LINKEDIN, 3],
  [REDDIT, 3],
  [HACKER_NEWS, 3],
  [DEV_TO, 2],
  [CSS_TRICKS, 1.5],
  [SMASHING, 1],
  [GMAIL, 2],
  [OUTLOOK, 1],
]);

interface Campaign {
  channels: readonly Channel[];
  source: string;
  medium: string;
  names: readonly string[];
  terms: ReadonlyArray<string | null>;
  contents: ReadonlyArray<string | null>;
  entry: EntryKind;
  shop: number;
}

const CAMPAIGNS = weightTable<Campaign>([
  [
    {
      channels: [GOOGLE],
      source: "google",
      medium: "cpc",
      names: ["brand_search", "competitor_search", "generic_analytics"],
      terms: [
        "product analytics",
        "openpanel alternative",
        "web analytics api",
        "privacy friendly analytics",
      ],
      contents: ["ad_a", "ad_b"],
      entry: "paid",
      shop: 0.1,
    },
    35,
  ],
  [
    {
      channels: [GMAIL, OUTLOOK, DIRECT],
      source: "newsletter",
      medium: "email",
      names: ["weekly_digest", "product_update", "black_friday"],
      terms: [null],
      contents: ["header_cta", "footer_link", "hero_image"],
      entry: "email",
      shop: 0.35,
    },
    25,
  ],
  [
    {
      channels: [FACEBOOK],
      source: "facebook",
      medium: "paid_social",
      names: ["retargeting", "launch_week"],
      terms: [null],
      contents: ["carousel", "video", "single_image"],
      entry: "paid",
      shop: 0.6,
    },
    15,
  ],
  [
    {
      channels: [LINKEDIN, TWITTER],
      source: "linkedin",
      medium: "social",
      names: ["launch_week", "case_study"],
      terms: [null],
      contents: ["post", null],
      entry: "social",
      shop: 0,
    },
    10,
  ],
  [
    {
      channels: [TWITTER],
      source: "twitter",
      medium: "social",
      names: ["launch_week"],
      terms: [null],
      contents: ["thread", null],
      entry: "social",
      shop: 0.1,
    },
    8,
  ],
  [
    {
      channels: [CSS_TRICKS, DEV_TO],
      source: "partner_blog",
      medium: "referral",
      names: ["affiliate"],
      terms: [null],
      contents: ["sidebar_banner", "inline_link"],
      entry: "link",
      shop: 0,
    },
    7,
  ],
]);
const CAMPAIGN_SHARE = 0.18;

// Pages --------------------------------------------------------------------------------------

const SITE = "https://example.com";
const SHOP = "https://shop.example.com";

interface Page {
  origin: string;
  path: string;
  title: string | null;
  /** path\torigin\ttitle, escaped. */
  block: string;
}

const PAGES: Page[] = [];

function page(origin: string, path: string, title: string | null): number {
  PAGES.push({ origin, path, title, block: `${copyText(path)}\t${copyText(origin)}\t${copyText(title)}` });
  return PAGES.length - 1;
}

const HOME = page(SITE, "/", "Example – Product analytics for modern teams");
const PRICING = page(SITE, "/pricing", "Pricing – Example");
const FEATURES = page(SITE, "/features", "Features – Example");
const FEATURE_DASHBOARDS = page(SITE, "/features/dashboards", "Dashboards – Example");
const FEATURE_FUNNELS = page(SITE, "/features/funnels", "Funnels & retention – Example");
const FEATURE_EXPORT = page(SITE, "/features/export", "Data export API – Example");
const BLOG = page(SITE, "/blog", "Blog – Example");
const BLOG_POSTS = [
  page(SITE, "/blog/what-is-a-session", "What is a session, really? – Example Blog"),
  page(SITE, "/blog/bounce-rate-explained", "Bounce rate explained – Example Blog"),
  page(SITE, "/blog/utm-parameters-guide", "The complete guide to UTM parameters – Example Blog"),
  page(SITE, "/blog/cookieless-analytics", "Cookieless analytics in 2024 – Example Blog"),
  page(SITE, "/blog/postgres-at-scale", "Running Postgres at 10 billion events – Example Blog"),
  page(SITE, "/blog/launch-week", "Launch week recap – Example Blog"),
];
const DOCS = page(SITE, "/docs", "Documentation – Example");
const DOCS_PAGES = [
  page(SITE, "/docs/getting-started", "Getting started – Example Docs"),
  page(SITE, "/docs/sdks/javascript", "JavaScript SDK – Example Docs"),
  page(SITE, "/docs/api/authentication", "Authentication – Example Docs"),
  page(SITE, "/docs/api/export", "Export API – Example Docs"),
  page(SITE, "/docs/api/insights", "Insights API – Example Docs"),
];
const ABOUT = page(SITE, "/about", "About us – Example");
const CONTACT = page(SITE, "/contact", "Contact – Example");
const CHANGELOG = page(SITE, "/changelog", "Changelog – Example");
const CAREERS = page(SITE, "/careers", null);
const SIGNUP_PAGE = page(SITE, "/signup", "Create your account – Example");
const LOGIN = page(SITE, "/login", "Log in – Example");
const WELCOME = page(SITE, "/welcome", "Welcome aboard – Example");

interface Product {
  sku: string;
  name: string;
  price: number;
  page: number;
}

const product = (sku: string, slug: string, name: string, price: number): Product => ({
  sku,
  name,
  price,
  page: page(SHOP, `/products/${slug}`, `${name} – Example Shop`),
});

const SHOP_HOME = page(SHOP, "/", "Example Shop");
const SHOP_APPAREL = page(SHOP, "/collections/apparel", "Apparel – Example Shop");
const SHOP_ACCESSORIES = page(SHOP, "/collections/accessories", "Accessories – Example Shop");
const SHOP_SEARCH = page(SHOP, "/search", "Search – Example Shop");
const PRODUCTS: readonly Product[] = [
  product("sku_1001", "example-hoodie", "Example Hoodie", 5900),
  product("sku_1002", "dashboard-tee", "Dashboard Tee", 2900),
  product("sku_1003", "analytics-mug", "Analytics Mug", 1900),
  product("sku_1004", "sticker-pack", "Sticker Pack", 900),
  product("sku_1005", "funnel-cap", "Funnel Cap", 2500),
  product("sku_1006", "dot-grid-notebook", "Dot Grid Notebook", 1500),
  product("sku_1007", "water-bottle", "Insulated Water Bottle", 2400),
  product("sku_1008", "laptop-sleeve", "Laptop Sleeve 14″", 3900),
];
const CART = page(SHOP, "/cart", "Your cart – Example Shop");
const CHECKOUT = page(SHOP, "/checkout", "Checkout – Example Shop");
const CHECKOUT_SUCCESS = page(SHOP, "/checkout/success", "Thank you for your order – Example Shop");

const PRODUCT_BY_PAGE = new Map<number, Product>(PRODUCTS.map((p) => [p.page, p]));

const spread = (pages: readonly number[], weight: number): Array<readonly [number, number]> =>
  pages.map((p) => [p, weight / pages.length] as const);

const SITE_ENTRY: Readonly<Record<EntryKind, WeightTable<number>>> = {
  direct: weightTable([
    [HOME, 5],
    [LOGIN, 1.5],
    [DOCS, 1],
    ...spread(DOCS_PAGES, 1),
    [PRICING, 1],
    [CHANGELOG, 0.5],
  ]),
  search: weightTable([
    [HOME, 3],
    ...spread(BLOG_POSTS, 4),
    ...spread(DOCS_PAGES, 2),
    [PRICING, 1],
    [FEATURES, 1],
  ]),
  social: weightTable([...spread(BLOG_POSTS, 5), [HOME, 3], [CHANGELOG, 1], [FEATURE_DASHBOARDS, 1]]),
  link: weightTable([...spread(BLOG_POSTS, 5), [HOME, 2], ...spread(DOCS_PAGES, 2)]),
  email: weightTable([[CHANGELOG, 2], ...spread(BLOG_POSTS, 3), [PRICING, 2], [HOME, 1]]),
  paid: weightTable([
    [PRICING, 3],
    [HOME, 2],
    [FEATURES, 1],
    [FEATURE_EXPORT, 1],
  ]),
};

const SITE_NEXT = weightTable<number>([
  [HOME, 2],
  [PRICING, 3],
  [FEATURES, 2],
  [FEATURE_DASHBOARDS, 1],
  [FEATURE_FUNNELS, 1],
  [FEATURE_EXPORT, 1],
  [BLOG, 1],
  ...spread(BLOG_POSTS, 3),
  [DOCS, 1],
  ...spread(DOCS_PAGES, 4),
  [ABOUT, 0.6],
  [CONTACT, 0.3],
  [CHANGELOG, 0.6],
  [CAREERS, 0.2],
  [SIGNUP_PAGE, 0.5],
  [LOGIN, 0.3],
]);

const SHOP_ENTRY = weightTable<number>([
  [SHOP_HOME, 4],
  ...spread(
    PRODUCTS.map((p) => p.page),
    4,
  ),
  [SHOP_APPAREL, 1.5],
  [SHOP_ACCESSORIES, 1],
]);

const SHOP_NEXT = weightTable<number>([
  [SHOP_HOME, 1],
  [SHOP_APPAREL, 1.5],
  [SHOP_ACCESSORIES, 1.2],
  [SHOP_SEARCH, 0.5],
  ...spread(
    PRODUCTS.map((p) => p.page),
    6,
  ),
]);

// Events -------------------------------------------------------------------------------------

const SCREEN_VIEW = 0;
const BUTTON_CLICK = 1;
const SIGNUP = 2;
const ADD_TO_CART = 3;
const PURCHASE = 4;
const EVENT_NAMES = ["screen_view", "button_click", "signup", "add_to_cart", "purchase"] as const;

interface EventMetaRow {
  name: string;
  description: string;
  conversion: boolean;
  color: string;
  icon: string;
}

/** Display metadata written for every seeded project. */
export const DEMO_EVENT_META: readonly EventMetaRow[] = [
  {
    name: "signup",
    description: "A visitor created an account",
    conversion: true,
    color: "#22c55e",
    icon: "user-plus",
  },
  {
    name: "purchase",
    description: "An order was paid",
    conversion: true,
    color: "#f59e0b",
    icon: "credit-card",
  },
  {
    name: "add_to_cart",
    description: "A product was added to the cart",
    conversion: false,
    color: "#3b82f6",
    icon: "shopping-cart",
  },
  {
    name: "button_click",
    description: "A tracked call-to-action was clicked",
    conversion: false,
    color: "#a855f7",
    icon: "mouse-pointer-click",
  },
];

const CLICKS: ReadonlyArray<readonly [string, string]> = [
  ["get_started", "hero"],
  ["book_demo", "header"],
  ["read_docs", "nav"],
  ["newsletter_subscribe", "footer"],
  ["copy_snippet", "docs"],
];
const PLANS = weightTable<readonly [string, number]>([
  [["free", 0], 50],
  [["pro", 49], 35],
  [["team", 99], 15],
]);
const SIGNUP_METHODS = ["email", "google", "github"] as const;
const VARIANTS = ["A", "B"] as const;

// Profiles -----------------------------------------------------------------------------------

const FIRST_NAMES = [
  "Emma",
  "Liam",
  "Olivia",
  "Noah",
  "Ava",
  "Lucas",
  "Sofia",
  "Mateo",
  "Ingrid",
  "Bjørn",
  "Astrid",
  "Søren",
  "Maja",
  "Oskar",
  "Hanna",
  "Jonas",
  "Amélie",
  "Louis",
  "Chloé",
  "Léa",
  "José",
  "María",
  "João",
  "Ana",
  "Priya",
  "Arjun",
  "Aarav",
  "Ananya",
  "Yuki",
  "Haruto",
  "Sakura",
  "Min-jun",
  "Zoë",
  "Ethan",
  "Mia",
  "Jack",
] as const;
const LAST_NAMES = [
  "Smith",
  "Johnson",
  "Williams",
  "Brown",
  "Garcia",
  "Miller",
  "Hansen",
  "Johansen",
  "Olsen",
  "Larsen",
  "Andersson",
  "Lindqvist",
  "Nilsson",
  "Müller",
  "Schmidt",
  "Schneider",
  "Dubois",
  "Lefèvre",
  "Rossi",
  "Silva",
  "Santos",
  "Patel",
  "Sharma",
  "Gupta",
  "Tanaka",
  "Suzuki",
  "Kim",
  "O'Brien",
  "Nguyen",
  "Kowalski",
] as const;
const EMAIL_DOMAINS = ["example.com", "example.org", "example.net", "mail.example"] as const;
const COMPANIES = [
  "Acme Inc",
  "Globex",
  "Initech",
  "Umbrella",
  "Hooli",
  "Stark Industries",
  "Nordlys AS",
  null,
];
const ROLES = ["Engineer", "Product Manager", "Designer", "Founder", "Marketer", "Data Analyst"] as const;
const PROFILE_PLANS = ["free", "free", "pro", "pro", "team"] as const;

// ---------------------------------------------------------------------------------------------
// Generator

export const EVENT_COLUMNS = [
  "id",
  "created_at",
  "name",
  "path",
  "origin",
  "title",
  "duration",
  "revenue",
  "properties",
  "project_id",
  "device_id",
  "profile_id",
  "session_id",
  "country",
  "region",
  "city",
  "latitude",
  "longitude",
  "device",
  "brand",
  "model",
  "browser",
  "browser_version",
  "os",
  "os_version",
  "referrer",
  "referrer_name",
  "referrer_type",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "utm_term",
  "utm_content",
  "ingest_xid",
] as const;

export const PROFILE_COLUMNS = [
  "project_id",
  "id",
  "first_name",
  "last_name",
  "email",
  "avatar",
  "is_external",
  "properties",
  "created_at",
  "last_seen_at",
] as const;

const NULL_REFERRER_BLOCK = Array.from({ length: 8 }, () => NULL).join("\t");
const NULL_UTM_BLOCK = `\t${Array.from({ length: 5 }, () => NULL).join("\t")}`;
const IDENTIFIED_SHARE = 0.3;

/** The visitors of one project: who is idle since when, and when each was first and last seen. */
class VisitorPool {
  lastEnd: Float64Array;
  firstSeen: Float64Array;
  lastSeen: Float64Array;
  size: number;
  readonly escapedProject: string;

  constructor(
    readonly project: string,
    readonly projectIndex: number,
    readonly nominal: number,
  ) {
    this.size = nominal;
    this.lastEnd = new Float64Array(nominal).fill(Number.NEGATIVE_INFINITY);
    this.firstSeen = new Float64Array(nominal);
    this.lastSeen = new Float64Array(nominal);
    this.escapedProject = copyText(project);
  }

  /**
   * A visitor idle for more than 30 minutes at `start`: returning visitors are favoured (a skewed
   * draw), and when every drawn one is busy a new visitor joins the pool.
   */
  acquire(rng: Rng, start: number, end: number): number {
    let visitor = -1;
    for (let attempt = 0; attempt < 6 && visitor < 0; attempt++) {
      const u = rng.float();
      const candidate = Math.floor(this.nominal * u * u);
      if (start - (this.lastEnd[candidate] ?? 0) > SESSION_IDLE_MS) visitor = candidate;
    }
    if (visitor < 0) {
      const from = rng.int(this.size);
      for (let i = 0; i < this.size && visitor < 0; i++) {
        const candidate = (from + i) % this.size;
        if (start - (this.lastEnd[candidate] ?? 0) > SESSION_IDLE_MS) visitor = candidate;
      }
    }
    if (visitor < 0) visitor = this.grow();
    this.lastEnd[visitor] = Math.max(this.lastEnd[visitor] ?? end, end);
    const first = this.firstSeen[visitor] ?? 0;
    if (first === 0 || start < first) this.firstSeen[visitor] = start;
    if (end > (this.lastSeen[visitor] ?? 0)) this.lastSeen[visitor] = end;
    return visitor;
  }

  private grow(): number {
    const index = this.size;
    if (index >= this.lastEnd.length) {
      const capacity = Math.max(16, this.lastEnd.length * 2);
      const lastEnd = new Float64Array(capacity).fill(Number.NEGATIVE_INFINITY);
      lastEnd.set(this.lastEnd);
      const firstSeen = new Float64Array(capacity);
      firstSeen.set(this.firstSeen);
      const lastSeen = new Float64Array(capacity);
      lastSeen.set(this.lastSeen);
      this.lastEnd = lastEnd;
      this.firstSeen = firstSeen;
      this.lastSeen = lastSeen;
    }
    this.size++;
    return index;
  }
}

interface Visitor {
  identified: boolean;
  profileId: string;
  place: Place;
  /** project\tdevice_id\tprofile_id\t (escaped; the session id follows). */
  head: string;
  /** \tcountry…os_version (escaped). */
  rest: string;
}

/** Per-hour scratch space for sessions before they get start times (reused; grows as needed). */
class HourBuffer {
  sessionCount = 0;
  eventCount = 0;
  readonly sessionProject: number[] = [];
  readonly sessionFirst: number[] = [];
  readonly sessionLength: number[] = [];
  readonly sessionReferrer: string[] = [];
  readonly eventType: number[] = [];
  readonly eventPage: number[] = [];
  readonly eventOffset: number[] = [];
  readonly eventRevenue: number[] = [];
  readonly eventProps: string[] = [];
  /** Events the current session may still add (the hour's budget). */
  room = 0;

  reset(): void {
    this.sessionCount = 0;
    this.eventCount = 0;
  }

  add(type: number, pageIndex: number, offset: number, revenue: number, props: string): boolean {
    if (this.room <= 0) return false;
    const i = this.eventCount++;
    this.eventType[i] = type;
    this.eventPage[i] = pageIndex;
    this.eventOffset[i] = offset;
    this.eventRevenue[i] = revenue;
    this.eventProps[i] = props;
    this.room--;
    return true;
  }
}

const CHUNK_BYTES = 1 << 20;
const TAB = 9;
const HEX_CODES = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
const utf8 = (text: string): Buffer => Buffer.from(text, "utf8");
/** name\t, escaped and encoded once. */
const EVENT_NAME_BYTES = EVENT_NAMES.map((name) => utf8(`${copyText(name)}\t`));
/** path\torigin\ttitle\t, escaped and encoded once. */
const PAGE_BYTES = PAGES.map((p) => utf8(`${p.block}\t`));
const EMPTY_PROPS = "{}";
const EMPTY_PROPS_BYTES = utf8(EMPTY_PROPS);

/**
 * Fills ~1 MB Buffers with COPY text. Rows are written byte by byte from pre-encoded pieces, so a
 * million rows cost no per-row strings; full Buffers queue up until the generator hands them out.
 */
class ByteSink {
  private buf = Buffer.allocUnsafe(CHUNK_BYTES + 65_536);
  private pos = 0;
  private readonly ready: Buffer[] = [];
  private day = Number.NaN;
  private readonly dayPrefix = Buffer.alloc(11);

  /** Makes room for `bytes` more; queues the current Buffer when it is full enough. */
  reserve(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    this.flush();
    if (bytes > this.buf.length) this.buf = Buffer.allocUnsafe(bytes + CHUNK_BYTES);
  }

  flush(): void {
    if (this.pos === 0) return;
    this.ready.push(this.buf.subarray(0, this.pos));
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.pos = 0;
  }

  get size(): number {
    return this.pos;
  }

  takeReady(): Buffer[] {
    return this.ready.splice(0, this.ready.length);
  }

  bytes(piece: Uint8Array): void {
    this.buf.set(piece, this.pos);
    this.pos += piece.length;
  }

  /** Writes a string that is already in COPY text form (escaped). */
  text(piece: string): void {
    this.pos += this.buf.write(piece, this.pos, "utf8");
  }

  byte(code: number): void {
    this.buf[this.pos++] = code;
  }

  /** A non-negative integer in decimal. */
  int(value: number): void {
    if (value < 10) {
      this.buf[this.pos++] = 48 + value;
      return;
    }
    let digits = 1;
    for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
    let v = value;
    for (let i = this.pos + digits - 1; i >= this.pos; i--) {
      this.buf[i] = 48 + (v % 10);
      v = Math.floor(v / 10);
    }
    this.pos += digits;
  }

  private two(value: number): void {
    this.buf[this.pos++] = 48 + Math.floor(value / 10);
    this.buf[this.pos++] = 48 + (value % 10);
  }

  /** An instant as `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  timestamp(ms: number): void {
    const day = Math.floor(ms / DAY);
    if (day !== this.day) {
      this.day = day;
      this.dayPrefix.write(new Date(day * DAY).toISOString().slice(0, 11), 0, "latin1");
    }
    this.bytes(this.dayPrefix);
    let rest = ms - day * DAY;
    const hours = Math.floor(rest / HOUR);
    rest -= hours * HOUR;
    const minutes = Math.floor(rest / MINUTE);
    rest -= minutes * MINUTE;
    const seconds = Math.floor(rest / 1000);
    const millis = rest - seconds * 1000;
    this.two(hours);
    this.byte(58);
    this.two(minutes);
    this.byte(58);
    this.two(seconds);
    this.byte(46);
    this.buf[this.pos++] = 48 + Math.floor(millis / 100);
    this.two(millis % 100);
    this.byte(90);
  }

  /** A version 4 UUID from four 32-bit draws. */
  uuid(rng: Rng): void {
    const a = rng.u32();
    const b = rng.u32();
    const c = (rng.u32() & 0x3fffffff) | 0x80000000;
    const d = rng.u32();
    this.hex(a, 8);
    this.byte(45);
    this.hex(b >>> 16, 4);
    this.byte(45);
    this.byte(52);
    this.hex(b & 0xfff, 3);
    this.byte(45);
    this.hex(c >>> 16, 4);
    this.byte(45);
    this.hex(c & 0xffff, 4);
    this.hex(d, 8);
  }

  private hex(value: number, digits: number): void {
    for (let i = digits - 1; i >= 0; i--) this.buf[this.pos++] = HEX_CODES[(value >>> (i * 4)) & 15] ?? 48;
  }

  /** Encodes `text` into a reusable scratch Buffer (for a piece repeated on many rows). */
  static encode(text: string, scratch: Scratch): void {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > scratch.buf.length) scratch.buf = Buffer.allocUnsafe(bytes * 2);
    scratch.length = scratch.buf.write(text, 0, "utf8");
  }

  scratch(piece: Scratch): void {
    piece.buf.copy(this.buf, this.pos, 0, piece.length);
    this.pos += piece.length;
  }
}

interface Scratch {
  buf: Buffer;
  length: number;
}

export interface GeneratorOptions {
  events: number;
  days: number;
  seed: number;
  now: Date;
  projects: ReadonlyArray<readonly [string, number]>;
  /** Value written to events.ingest_xid (the loading transaction's id). */
  ingestXid: string;
}

/**
 * Generates the demo events, then their profiles, as COPY text in ~1 MB Buffers. Single use:
 * iterate `eventChunks()` once, then `profileChunks()` (profiles come from the visitors seen).
 */
export class DemoDataGenerator {
  events = 0;
  sessions = 0;
  profiles = 0;
  readonly pools: VisitorPool[];
  private readonly rng: Rng;
  private readonly ids: Rng;
  private readonly attrs = new Rng();
  private readonly projectTable: WeightTable<number>;
  private readonly nowMs: number;
  private readonly startMs: number;
  private readonly xidTail: string;
  private readonly sink = new ByteSink();
  private readonly firstTail: Scratch = { buf: Buffer.alloc(4096), length: 0 };
  private readonly restTail: Scratch = { buf: Buffer.alloc(4096), length: 0 };

  constructor(private readonly options: GeneratorOptions) {
    const { events, days, seed, now, projects } = options;
    if (!Number.isSafeInteger(events) || events < 0) throw new Error("events must be a non-negative integer");
    if (!(days > 0)) throw new Error("days must be positive");
    if (Number.isNaN(now.getTime())) throw new Error("now must be a valid date");
    if (projects.length === 0) throw new Error("at least one project is needed");
    this.rng = new Rng(seed >>> 0);
    this.ids = new Rng(hash32(seed >>> 0, Math.floor(now.getTime() / 4294967296), now.getTime() >>> 0));
    this.nowMs = now.getTime();
    this.startMs = this.nowMs - Math.round(days * DAY);
    this.xidTail = `\t${copyText(options.ingestXid)}\n`;
    this.projectTable = weightTable(projects.map(([, share], i) => [i, share] as const));
    const totalShare = projects.reduce((sum, [, share]) => sum + share, 0);
    this.pools = projects.map(
      ([project, share], i) => new VisitorPool(project, i, Math.ceil((events * share) / totalShare / 4) + 30),
    );
  }

  /** Event rows (COPY text, columns EVENT_COLUMNS). */
  *eventChunks(): Generator<Buffer> {
    const { rng, sink } = this;
    const buckets = this.hourBuckets();
    const hour = new HourBuffer();
    const totalWeight = buckets.weights.reduce((sum, w) => sum + w, 0);
    let bucketStart = this.startMs;
    let planned = 0;
    let cumulative = 0;
    for (let b = 0; b < buckets.ends.length; b++) {
      const bucketEnd = buckets.ends[b] ?? this.nowMs;
      cumulative += buckets.weights[b] ?? 0;
      const last = b === buckets.ends.length - 1;
      const target = last
        ? this.options.events
        : Math.round((this.options.events * cumulative) / totalWeight);
      // Sessions are planned whole; one that overshoots the hour's share takes it from the next
      // hour. Only the total is a hard limit (the last session may be cut short to meet it).
      hour.reset();
      while (planned < target) {
        hour.room = this.options.events - planned;
        this.planSession(hour);
        planned = this.options.events - hour.room;
      }
      if (hour.sessionCount > 0) {
        const starts = new Float64Array(hour.sessionCount);
        for (let i = 0; i < starts.length; i++)
          starts[i] = bucketStart + rng.float() * (bucketEnd - bucketStart);
        starts.sort();
        for (let s = 0; s < hour.sessionCount; s++) {
          this.emitSession(hour, s, Math.floor(starts[s] ?? bucketStart));
          if (sink.size >= CHUNK_BYTES) sink.flush();
          yield* sink.takeReady();
        }
      }
      bucketStart = bucketEnd;
    }
    sink.flush();
    yield* sink.takeReady();
  }

  /** Profile rows (COPY text, columns PROFILE_COLUMNS) of the identified visitors that were seen. */
  *profileChunks(): Generator<Buffer> {
    let chunk = "";
    for (const pool of this.pools) {
      for (let v = 0; v < pool.size; v++) {
        const firstSeen = pool.firstSeen[v] ?? 0;
        if (firstSeen === 0) continue;
        const visitor = this.visitor(pool, v);
        if (!visitor.identified) continue;
        chunk += this.profileRow(pool, visitor, firstSeen, pool.lastSeen[v] ?? firstSeen);
        this.profiles++;
        if (chunk.length >= CHUNK_BYTES / 2) {
          yield utf8(chunk);
          chunk = "";
        }
      }
    }
    if (chunk.length > 0) yield utf8(chunk);
  }

  /** Hour-aligned time buckets from `now - days` to `now` with their traffic weights. */
  private hourBuckets(): { ends: Float64Array; weights: Float64Array } {
    const { startMs, nowMs } = this;
    const boundaries: number[] = [];
    for (let t = Math.floor(startMs / HOUR) * HOUR + HOUR; t < nowMs; t += HOUR) boundaries.push(t);
    boundaries.push(nowMs);
    const ends = Float64Array.from(boundaries);
    const weights = new Float64Array(ends.length);
    const noise = new Rng();
    const dayNoise = new Map<number, number>();
    let from = startMs;
    for (let i = 0; i < ends.length; i++) {
      const to = ends[i] ?? nowMs;
      const mid = (from + to) / 2;
      const day = Math.floor(mid / DAY);
      let factor = dayNoise.get(day);
      if (factor === undefined) {
        factor = 0.88 + 0.24 * noise.reseed(hash32(this.options.seed >>> 0, day)).float();
        dayNoise.set(day, factor);
      }
      const progress = nowMs > startMs ? (mid - startMs) / (nowMs - startMs) : 1;
      weights[i] = Math.max(0, to - from) * trafficShape(mid) * factor * (0.85 + 0.3 * progress);
      from = to;
    }
    return { ends, weights };
  }

  /** Decides one session's events (types, pages, offsets) into the hour buffer. */
  private planSession(hour: HourBuffer): void {
    const { rng } = this;
    const s = hour.sessionCount++;
    hour.sessionProject[s] = pickWeighted(rng, this.projectTable);
    hour.sessionFirst[s] = hour.eventCount;

    let source: Channel;
    let entry: EntryKind;
    let shop: boolean;
    let utm = "";
    if (rng.chance(CAMPAIGN_SHARE)) {
      const campaign = pickWeighted(rng, CAMPAIGNS);
      source = rng.pick(campaign.channels);
      entry = campaign.entry;
      shop = rng.chance(campaign.shop);
      utm = [
        campaign.source,
        campaign.medium,
        rng.pick(campaign.names),
        rng.pick(campaign.terms),
        rng.pick(campaign.contents),
      ]
        .map((v) => copyText(v))
        .join("\t");
    } else {
      source = pickWeighted(rng, ORGANIC_CHANNELS);
      entry = source.entry;
      shop = rng.chance(0.22);
    }
    hour.sessionReferrer[s] =
      source.referrer === null && utm === ""
        ? NULL_REFERRER_BLOCK
        : [source.referrer, source.name, source.type].map((v) => copyText(v)).join("\t") +
          (utm === "" ? NULL_UTM_BLOCK : `\t${utm}`);

    const views = rng.chance(source.bounce) ? 1 : 2 + Math.min(rng.geometric(0.3), 18);
    if (shop) this.planShop(hour, views);
    else this.planSite(hour, views, entry);
    hour.sessionLength[s] = hour.eventCount - (hour.sessionFirst[s] ?? 0);
    this.sessions++;
  }

  private planSite(hour: HourBuffer, views: number, entry: EntryKind): void {
    const { rng } = this;
    let current = pickWeighted(rng, SITE_ENTRY[entry]);
    // t: time of the session's latest event; a page's events follow its screen view.
    let t = 0;
    let pageStart = 0;
    let next = -1;
    for (let v = 0; v < views; v++) {
      if (v > 0) t = nextViewAt(rng, pageStart, t, next >= 0);
      pageStart = t;
      if (!hour.add(SCREEN_VIEW, current, t, 0, "{}")) return;
      next = -1;
      const more = v < views - 1;
      if (current === PRICING && more && rng.chance(0.3)) {
        const [plan] = pickWeighted(rng, PLANS);
        t += rng.range(2_000, 60_000);
        const props = `{"button":"start_trial","location":"pricing","plan":"${plan}","variant":"${rng.pick(VARIANTS)}"}`;
        if (!hour.add(BUTTON_CLICK, current, t, 0, props)) return;
        next = SIGNUP_PAGE;
      } else if (current === SIGNUP_PAGE && rng.chance(0.45)) {
        const [plan, price] = pickWeighted(rng, PLANS);
        t += rng.range(15_000, 120_000);
        const method = rng.pick(SIGNUP_METHODS);
        const props = `{"plan":"${plan}","price":${price},"variant":"${rng.pick(VARIANTS)}","method":"${method}"}`;
        if (!hour.add(SIGNUP, current, t, 0, props)) return;
        next = WELCOME;
      } else if (rng.chance(0.07)) {
        const [button, location] = rng.pick(CLICKS);
        t += rng.range(1_500, 45_000);
        const props = `{"button":"${button}","location":"${location}","variant":"${rng.pick(VARIANTS)}"}`;
        if (!hour.add(BUTTON_CLICK, current, t, 0, props)) return;
      }
      if (next >= 0 && !more) return;
      current = next >= 0 ? next : pickWeighted(rng, SITE_NEXT);
    }
  }

  private planShop(hour: HourBuffer, plannedViews: number): void {
    const { rng } = this;
    let views = plannedViews;
    let current = pickWeighted(rng, SHOP_ENTRY);
    let t = 0;
    let pageStart = 0;
    let next = -1;
    let cartTotal = 0;
    let cartItems = 0;
    for (let v = 0; v < views; v++) {
      if (v > 0) t = nextViewAt(rng, pageStart, t, next >= 0);
      pageStart = t;
      if (!hour.add(SCREEN_VIEW, current, t, 0, "{}")) return;
      next = -1;
      const item = PRODUCT_BY_PAGE.get(current);
      if (item !== undefined && rng.chance(0.28)) {
        const quantity = rng.chance(0.85) ? 1 : rng.range(2, 3);
        t += rng.range(5_000, 90_000);
        const props = `{"product_id":"${item.sku}","product":"${item.name}","price":${item.price},"quantity":${quantity},"currency":"USD"}`;
        if (!hour.add(ADD_TO_CART, current, t, 0, copyText(props))) return;
        cartTotal += item.price * quantity;
        cartItems += quantity;
        if (rng.chance(0.4)) next = CART;
      } else if (current === CART && cartItems > 0 && rng.chance(0.55)) {
        next = CHECKOUT;
      } else if (current === CHECKOUT && cartItems > 0 && rng.chance(0.7)) {
        t += rng.range(30_000, 240_000);
        const coupon = rng.chance(0.15);
        const props = `{"order_id":"ord_${rng.hex(6)}","currency":"USD","items":${cartItems},"coupon":${
          coupon ? '"WELCOME10"' : "null"
        }}`;
        const revenue = coupon ? Math.round(cartTotal * 0.9) : cartTotal;
        if (!hour.add(PURCHASE, current, t, revenue, props)) return;
        cartTotal = 0;
        cartItems = 0;
        next = CHECKOUT_SUCCESS;
      }
      if (next >= 0) {
        // The funnel continues even where the planned page count ran out.
        if (v === views - 1) views++;
        current = next;
      } else {
        current = cartItems > 0 && rng.chance(0.25) ? CART : pickWeighted(rng, SHOP_NEXT);
      }
    }
  }

  /** Gives session `s` of the hour a visitor and a start time, and writes its rows. */
  private emitSession(hour: HourBuffer, s: number, plannedStart: number): void {
    const { sink, ids } = this;
    const first = hour.sessionFirst[s] ?? 0;
    const length = hour.sessionLength[s] ?? 0;
    const span = hour.eventOffset[first + length - 1] ?? 0;
    // Events never lie in the future: a session that would run past `now` starts earlier.
    const start = plannedStart + span > this.nowMs ? this.nowMs - span : plannedStart;
    const pool = this.pools[hour.sessionProject[s] ?? 0];
    if (pool === undefined) throw new Error("unknown project index");
    const visitor = this.visitor(pool, pool.acquire(this.rng, start, start + span));
    const head = `\t${visitor.head}${ids.uuid()}${visitor.rest}\t`;
    const { firstTail, restTail } = this;
    ByteSink.encode(head + (hour.sessionReferrer[s] ?? NULL_REFERRER_BLOCK) + this.xidTail, firstTail);
    if (length > 1) ByteSink.encode(head + NULL_REFERRER_BLOCK + this.xidTail, restTail);
    for (let i = 0; i < length; i++) {
      const e = first + i;
      const offset = hour.eventOffset[e] ?? 0;
      const type = hour.eventType[e] ?? SCREEN_VIEW;
      const props = hour.eventProps[e] ?? EMPTY_PROPS;
      sink.reserve(512 + firstTail.length + restTail.length + props.length * 3);
      sink.uuid(ids);
      sink.byte(TAB);
      sink.timestamp(start + offset);
      sink.byte(TAB);
      sink.bytes(EVENT_NAME_BYTES[type] ?? EVENT_NAME_BYTES[SCREEN_VIEW] ?? Buffer.alloc(0));
      sink.bytes(PAGE_BYTES[hour.eventPage[e] ?? 0] ?? Buffer.alloc(0));
      sink.int(type === SCREEN_VIEW && i < length - 1 ? (hour.eventOffset[e + 1] ?? offset) - offset : 0);
      sink.byte(TAB);
      sink.int(hour.eventRevenue[e] ?? 0);
      sink.byte(TAB);
      if (props === EMPTY_PROPS) sink.bytes(EMPTY_PROPS_BYTES);
      else sink.text(props);
      sink.scratch(i === 0 ? firstTail : restTail);
    }
    this.events += length;
  }

  /** A visitor's fixed attributes, derived from (seed, project, visitor index) alone. */
  private visitor(pool: VisitorPool, index: number): Visitor {
    const rng = this.attrs.reseed(hash32(this.options.seed >>> 0, pool.projectIndex, index), 0x0b5e55ed);
    const identified = rng.chance(IDENTIFIED_SHARE);
    const deviceId = rng.hex(16);
    const profileId = identified ? `user_${index + 1}` : deviceId;
    const where = pickWeighted(rng, PLACES);
    const kind = pickWeighted(rng, DEVICE_PROFILES);
    const browser = pickWeighted(rng, kind.browsers);
    return {
      identified,
      profileId,
      place: where,
      head: `${pool.escapedProject}\t${deviceId}\t${profileId}\t`,
      // Catalog strings need no escaping (checked when the module loads).
      rest:
        `\t${PLACE_BLOCKS.get(where) ?? ""}\t${kind.device}\t${kind.brand ?? NULL}\t${rng.pick(kind.models) ?? NULL}` +
        `\t${browser.name}\t${rng.pick(browser.versions)}\t${kind.os}\t${rng.pick(kind.osVersions) ?? NULL}`,
    };
  }

  private profileRow(pool: VisitorPool, visitor: Visitor, firstSeen: number, lastSeen: number): string {
    const rng = this.attrs.reseed(hashString(`${this.options.seed}:${pool.project}:${visitor.profileId}`));
    const firstName = rng.pick(FIRST_NAMES);
    const lastName = rng.pick(LAST_NAMES);
    const local = `${firstName}.${lastName}`
      .normalize("NFKD")
      .replace(/[^A-Za-z.]/g, "")
      .toLowerCase();
    const email = `${local}${rng.chance(0.4) ? rng.range(1, 99) : ""}@${rng.pick(EMAIL_DOMAINS)}`;
    const avatar = rng.chance(0.8) ? `https://avatars.example.com/${visitor.profileId}.png` : null;
    const company = rng.pick(COMPANIES);
    const properties = JSON.stringify({
      plan: rng.pick(PROFILE_PLANS),
      role: rng.pick(ROLES),
      ...(company === null ? {} : { company }),
      country: visitor.place.country,
      newsletter: rng.chance(0.4),
    });
    return `${[
      pool.project,
      visitor.profileId,
      firstName,
      lastName,
      email,
      avatar,
      "t",
      properties,
      new Date(firstSeen).toISOString(),
      new Date(lastSeen).toISOString(),
    ]
      .map((v) => copyText(v))
      .join("\t")}\n`;
  }
}

/** Relative traffic at an instant: a daily rhythm peaking mid-afternoon UTC, quieter weekends. */
function trafficShape(ms: number): number {
  const date = new Date(ms);
  const hour = date.getUTCHours() + date.getUTCMinutes() / 60;
  const distance = Math.min(Math.abs(hour - 14.5), 24 - Math.abs(hour - 14.5));
  const daily = 0.22 + Math.exp(-(distance * distance) / (2 * 4.2 * 4.2));
  const weekly = WEEKDAY_FACTORS[date.getUTCDay()] ?? 1;
  return daily * weekly;
}

const WEEKDAY_FACTORS = [0.74, 1.04, 1.08, 1.08, 1.06, 0.95, 0.7] as const;

/** Time on a page before the next one: log-normal around 35 s, 1.5 s to 25 minutes. */
function timeOnPage(rng: Rng): number {
  return Math.round(Math.min(MAX_GAP_MS, Math.max(1_500, rng.logNormal(35_000, 1.05))));
}

/**
 * When the next screen view happens: a moment after the page's last event when that event
 * navigated (a click through to sign-up, a checkout), else after the time spent on the page.
 */
function nextViewAt(rng: Rng, pageStart: number, lastEvent: number, navigated: boolean): number {
  const soon = lastEvent + rng.range(300, 4_000);
  return navigated ? soon : Math.max(soon, pageStart + timeOnPage(rng));
}

// ---------------------------------------------------------------------------------------------
// Loading

function isEmbedded(version: string): boolean {
  return /pglite|wasm32|emscripten/i.test(version);
}

/**
 * Streams COPY text chunks into `COPY … FROM STDIN`, respecting backpressure. With `maxBytes`, the
 * rows are split over several COPY statements of about that size (the embedded database buffers a
 * whole COPY in memory before running it).
 */
async function copyChunks(
  client: pg.ClientBase,
  statement: string,
  chunks: Iterable<Buffer>,
  onChunk: () => void,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<void> {
  const iterator = chunks[Symbol.iterator]();
  let next = iterator.next();
  while (!next.done) {
    const stream = client.query(copyFrom(statement));
    let failed: Error | undefined;
    const done = new Promise<void>((resolve, reject) => {
      stream.on("finish", resolve);
      stream.on("error", (error: Error) => {
        failed = error;
        reject(error);
      });
    });
    let written = 0;
    while (!next.done && written < maxBytes && failed === undefined) {
      written += next.value.length;
      if (!stream.write(next.value)) await Promise.race([once(stream, "drain"), done]);
      onChunk();
      next = iterator.next();
    }
    stream.end();
    await done;
  }
}

async function analyze(connectionString: string, tables: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`ANALYZE ${tables}`);
  } finally {
    await client.end();
  }
}

/** Distinct project ids in a table whose primary or leading index column is project_id. */
async function distinctProjects(client: pg.ClientBase, table: string): Promise<string[]> {
  const result = await client.query<{ project_id: string }>(
    `WITH RECURSIVE p AS (
       (SELECT project_id FROM ${table} ORDER BY project_id LIMIT 1)
       UNION ALL
       SELECT (SELECT project_id FROM ${table} WHERE project_id > p.project_id ORDER BY project_id LIMIT 1)
       FROM p WHERE p.project_id IS NOT NULL
     )
     SELECT project_id FROM p WHERE project_id IS NOT NULL`,
  );
  return result.rows.map((row) => row.project_id);
}

function projectShares(projects: readonly string[] | undefined): Array<readonly [string, number]> {
  if (projects === undefined) return [...DEFAULT_PROJECT_SHARES];
  const unique = [...new Set(projects)];
  if (unique.length === 0) throw new Error("projects must not be empty");
  if (unique.length === 1) return [[unique[0] ?? "demo", 1]];
  // The first project gets most of the traffic; the others share the rest as noise.
  return unique.map((p, i) => [p, i === 0 ? 0.8 : 0.2 / (unique.length - 1)] as const);
}

/** The embedded database holds a whole COPY in memory: keep each one to about this size. */
const EMBEDDED_COPY_BYTES = 16 << 20;

/** Below this many events, dropping and rebuilding the events indexes is not worth it. */
const REBUILD_INDEXES_FROM = 100_000;

interface IndexDefinition {
  name: string;
  /** The statement that recreates it. */
  definition: string;
}

interface DroppedIndexes {
  /** The primary key, when it was dropped. */
  primary?: IndexDefinition;
  /** The other indexes, by name. */
  secondary: IndexDefinition[];
}

const NOTHING_DROPPED: DroppedIndexes = { secondary: [] };

/**
 * Drops the indexes of `table` (and, with `primaryKey`, its primary key when nothing references
 * it) inside the current transaction: building them once after a bulk load is several times
 * faster than maintaining them row by row. Their definitions are read from the catalog, so this
 * follows whatever the migrations made. Indexes that back a constraint other than that primary
 * key stay.
 */
async function dropIndexes(
  client: pg.ClientBase,
  table: string,
  primaryKey: boolean,
): Promise<DroppedIndexes> {
  const dropped: DroppedIndexes = { secondary: [] };
  if (primaryKey) {
    const constraints = await client.query<{ name: string; definition: string; referenced: boolean }>(
      `SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS definition,
         EXISTS (SELECT 1 FROM pg_constraint f WHERE f.confrelid = c.conrelid) AS referenced
       FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype = 'p'`,
      [table],
    );
    const primary = constraints.rows[0];
    if (primary !== undefined && !primary.referenced) {
      await client.query(`ALTER TABLE ${quoteIdent(table)} DROP CONSTRAINT ${quoteIdent(primary.name)}`);
      dropped.primary = {
        name: primary.name,
        definition: `ALTER TABLE ${quoteIdent(table)} ADD CONSTRAINT ${quoteIdent(primary.name)} ${primary.definition}`,
      };
    }
  }
  const indexes = await client.query<IndexDefinition>(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
     WHERE x.indrelid = $1::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
     ORDER BY i.relname`,
    [table],
  );
  for (const index of indexes.rows) {
    await client.query(`DROP INDEX ${quoteIdent(index.name)}`);
    dropped.secondary.push(index);
  }
  return dropped;
}

/** Room for sorting an index build (a session setting: the server's configuration stays as is). */
const INDEX_BUILD_MEMORY = "256MB";

/**
 * Derives the sessions of the freshly committed events: `refresh_derived()` in a transaction that
 * first drops the sessions table's secondary indexes and rebuilds them afterwards (the routine then
 * inserts its rows with only the primary key to maintain, which its ON CONFLICT needs). Atomic: on
 * failure the sessions and their indexes stay as they were.
 */
async function deriveSessions(client: pg.ClientBase): Promise<void> {
  await client.query("BEGIN");
  try {
    const dropped = await dropIndexes(client, "sessions", false);
    await client.query("SELECT refresh_derived()");
    if (dropped.secondary.length > 0) {
      await client.query(`SET LOCAL maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
      for (const index of dropped.secondary) await client.query(index.definition);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/**
 * Builds the events indexes that the load committed without, on a connection of its own (CREATE
 * INDEX takes a SHARE lock, so refresh_derived() can read the events meanwhile), then gathers
 * statistics for the loaded tables. Each index is built in its own transaction; the error names
 * every one that is missing, with the statement that recreates it.
 */
async function buildEventIndexes(
  connectionString: string,
  indexes: readonly IndexDefinition[],
): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SET client_min_messages = warning");
    await client.query("SET synchronous_commit = off");
    await client.query(`SET maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
    // No parallel workers: refresh_derived() on the other connection is the longer job, and with
    // two cores the builds' workers would only take CPU away from it.
    await client.query("SET max_parallel_maintenance_workers = 0");
    const missing: IndexDefinition[] = [];
    let failure: unknown;
    for (const index of indexes) {
      if (failure !== undefined) {
        missing.push(index);
        continue;
      }
      try {
        await client.query(index.definition);
      } catch (error) {
        failure = error;
        missing.push(index);
      }
    }
    await client.query("ANALYZE events, profiles");
    if (failure !== undefined) {
      const reason = failure instanceof Error ? failure.message : String(failure);
      throw new Error(
        `the events were loaded, but rebuilding their indexes failed (${reason}); queries work without ` +
          `them but slowly. Missing: ${missing.map((i) => i.name).join(", ")}. Recreate them with:\n` +
          missing.map((i) => `  ${i.definition};`).join("\n"),
        { cause: failure },
      );
    }
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Builds the event rollups on the second connection while refresh_derived() derives the sessions
 * on the first: they read only events. refresh_derived() then waits for this build (its lock)
 * and finds the watermark past every loaded event.
 */
async function buildEventRollups(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SET synchronous_commit = off");
    await client.query(
      "SELECT refresh_event_rollups((pg_snapshot_xmin(pg_current_snapshot())::text)::bigint)",
    );
  } finally {
    await client.end().catch(() => {});
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Creates the demo fixtures and loads `events` generated events (plus their profiles and event
 * metadata) into the database in one transaction, then derives the sessions with
 * `refresh_derived()`. The schema must be migrated.
 *
 * With `reset`, the seeded projects' events, sessions, profiles and event metadata are removed
 * first (when the database holds no other projects, by TRUNCATE, which also resets the
 * derived-table watermark). Loading into an empty events table uses COPY FREEZE and rebuilds the
 * primary key before committing; the other events indexes are then built on a second connection
 * while refresh_derived() runs (a failure there names the missing indexes). Otherwise rows are
 * appended with the indexes in place.
 */
export async function seedDatabase(connectionString: string, options: SeedOptions): Promise<SeedResult> {
  const began = performance.now();
  const now = options.now ?? new Date();
  const shares = projectShares(options.projects);
  const projectIds = shares.map(([p]) => p);
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const version = (await client.query<{ version: string }>("SELECT version()")).rows[0]?.version ?? "";
    const embedded = isEmbedded(version);
    const copyBatchBytes = embedded ? EMBEDDED_COPY_BYTES : Number.POSITIVE_INFINITY;
    await client.query("SET client_min_messages = warning");
    // A seed can be rerun: don't wait for each commit's WAL flush (this session only).
    if (!embedded) await client.query("SET synchronous_commit = off");

    let generator: DemoDataGenerator | undefined;
    let indexMillis = 0;
    let lateIndexMillis = 0;
    let refreshMillis = 0;
    // Events indexes dropped for the load and built after it commits, alongside refresh_derived().
    const deferred: IndexDefinition[] = [];
    await client.query("BEGIN");
    try {
      // Fixtures commit together with the rows: a demo project that exists has its data.
      await ensureDemoFixtures(client);
      for (const id of projectIds) {
        if (DEMO_PROJECTS.some((p) => p.id === id)) continue;
        await client.query(
          "INSERT INTO projects (id, organization_id, name) VALUES ($1, 'demo-org', $1) ON CONFLICT (id) DO NOTHING",
          [id],
        );
      }
      // `fresh`: the events table is empty and was truncated in this transaction, so COPY may FREEZE.
      let fresh = false;
      if (options.reset) {
        const present = new Set([
          ...(await distinctProjects(client, "events")),
          ...(await distinctProjects(client, "sessions")),
          ...(await distinctProjects(client, "profiles")),
          ...(await distinctProjects(client, "event_meta")),
        ]);
        if ([...present].every((p) => projectIds.includes(p))) {
          await client.query("TRUNCATE events, sessions, profiles, event_meta");
          await client.query("DELETE FROM derived_state");
          fresh = true;
        } else {
          for (const table of ["events", "sessions", "profiles", "event_meta"]) {
            await client.query(`DELETE FROM ${table} WHERE project_id = ANY($1)`, [projectIds]);
          }
        }
      } else if ((await client.query("SELECT 1 FROM events LIMIT 1")).rowCount === 0) {
        await client.query("TRUNCATE events");
        fresh = true;
      }
      const xid =
        (await client.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]?.xid ?? "0";
      const rows = new DemoDataGenerator({
        events: options.events,
        days: options.days,
        seed: options.seed,
        now,
        projects: shares,
        ingestXid: xid,
      });
      generator = rows;
      const progress = (): void => options.onProgress?.(rows.events, options.events);

      const rebuild = fresh && !embedded && options.events >= REBUILD_INDEXES_FROM;
      const dropped = rebuild ? await dropIndexes(client, "events", true) : NOTHING_DROPPED;
      const freeze = fresh ? " WITH (FREEZE)" : "";
      const copyEvents = `COPY events (${EVENT_COLUMNS.join(", ")}) FROM STDIN${freeze}`;
      await copyChunks(client, copyEvents, rows.eventChunks(), progress, copyBatchBytes);
      // The primary key commits with the rows (it guards against loading them twice); the other
      // indexes are built after the commit, while the sessions derive.
      if (dropped.primary !== undefined) {
        options.onPhase?.("indexes");
        const indexStart = performance.now();
        await client.query(`SET LOCAL maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
        await client.query(dropped.primary.definition);
        indexMillis = performance.now() - indexStart;
      }
      deferred.push(...dropped.secondary);

      // Profiles: plain rows after a reset; merged into existing ones otherwise.
      const profileTarget = options.reset ? "profiles" : "seed_profiles";
      if (!options.reset) {
        await client.query("CREATE TEMP TABLE seed_profiles (LIKE profiles) ON COMMIT DROP");
      }
      const copyProfiles = `COPY ${profileTarget} (${PROFILE_COLUMNS.join(", ")}) FROM STDIN`;
      await copyChunks(client, copyProfiles, rows.profileChunks(), () => {}, copyBatchBytes);
      if (!options.reset) {
        await client.query(
          `INSERT INTO profiles (${PROFILE_COLUMNS.join(", ")})
           SELECT ${PROFILE_COLUMNS.join(", ")} FROM seed_profiles
           ON CONFLICT (project_id, id) DO UPDATE SET
             created_at = least(profiles.created_at, excluded.created_at),
             last_seen_at = greatest(profiles.last_seen_at, excluded.last_seen_at)`,
        );
      }

      for (const project of projectIds) {
        for (const meta of DEMO_EVENT_META) {
          await client.query(
            `INSERT INTO event_meta (project_id, name, description, conversion, color, icon)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (project_id, name) DO UPDATE SET description = excluded.description,
               conversion = excluded.conversion, color = excluded.color, icon = excluded.icon`,
            [project, meta.name, meta.description, meta.conversion, meta.color, meta.icon],
          );
        }
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      if (error instanceof Error && "code" in error && error.code === "23505") {
        throw new Error(
          `${error.message}: rows from this seed and 'now' are already loaded; rerun with --reset or another seed`,
        );
      }
      throw error;
    }
    options.onProgress?.(generator.events, options.events);
    const loaded = performance.now();
    options.onPhase?.("sessions");

    // The routine sorts every loaded event once: give the sort room (unless it sets its own).
    await client.query(`SET work_mem = '${embedded ? "64MB" : "256MB"}'`);
    if (embedded) {
      await client.query("SELECT refresh_derived()");
    } else if (deferred.length > 0) {
      // Two connections: the sessions derive on this one while the other builds the remaining
      // events indexes, analyzes events and profiles, then builds the event rollups. Both run to
      // their end either way.
      const indexStart = performance.now();
      const [derived, indexed] = await Promise.allSettled([
        deriveSessions(client).finally(() => {
          refreshMillis = performance.now() - indexStart;
        }),
        buildEventIndexes(connectionString, deferred)
          .finally(() => {
            lateIndexMillis = performance.now() - indexStart;
          })
          .then(() => buildEventRollups(connectionString)),
      ]);
      if (derived.status === "rejected") {
        const reason = derived.reason instanceof Error ? derived.reason.message : String(derived.reason);
        const also = indexed.status === "rejected" ? ` (and: ${String(indexed.reason)})` : "";
        throw new Error(
          `the events were loaded, but deriving the sessions failed (${reason})${also}; ` +
            "run SELECT refresh_derived() to derive them",
          { cause: derived.reason },
        );
      }
      if (indexed.status === "rejected") throw indexed.reason;
      await client.query("ANALYZE sessions");
    } else {
      // Statistics for the fresh rows, gathered on a second connection while the sessions derive.
      await Promise.all([
        client.query("SELECT refresh_derived()"),
        analyze(connectionString, "events, profiles"),
      ]);
      await client.query("ANALYZE sessions");
    }
    // Bulk-loaded session pages are not all-visible yet: until autovacuum gets to them, the index-only
    // scans of path filters would read the table too. VACUUM marks them (a second at a million events).
    await client.query("VACUUM session_pages");
    await client.query("RESET work_mem");

    return {
      events: generator.events,
      sessions: generator.sessions,
      profiles: generator.profiles,
      millis: Math.round(performance.now() - began),
      loadMillis: Math.round(loaded - began),
      indexMillis: Math.round(indexMillis),
      deriveMillis: Math.round(performance.now() - loaded),
      refreshMillis: Math.round(refreshMillis),
      lateIndexMillis: Math.round(lateIndexMillis),
    };
  } finally {
    await client.end();
  }
}
