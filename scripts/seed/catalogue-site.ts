import type { EntryKind } from "./catalogue-sources";
import { copyText } from "./copy-text";
import { type WeightTable, weightTable } from "./random";

/**
 * What the demo visitors see and do: the site's and the shop's pages and products, where a
 * session enters and where it goes next, and the events (with their display metadata). Part of
 * the seed's catalogue.
 */

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

export const PAGES: Page[] = [];

function page(origin: string, path: string, title: string | null): number {
  PAGES.push({ origin, path, title, block: `${copyText(path)}\t${copyText(origin)}\t${copyText(title)}` });
  return PAGES.length - 1;
}

const HOME = page(SITE, "/", "Example – Product analytics for modern teams");
export const PRICING = page(SITE, "/pricing", "Pricing – Example");
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
export const SIGNUP_PAGE = page(SITE, "/signup", "Create your account – Example");
const LOGIN = page(SITE, "/login", "Log in – Example");
export const WELCOME = page(SITE, "/welcome", "Welcome aboard – Example");

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
export const CART = page(SHOP, "/cart", "Your cart – Example Shop");
export const CHECKOUT = page(SHOP, "/checkout", "Checkout – Example Shop");
export const CHECKOUT_SUCCESS = page(SHOP, "/checkout/success", "Thank you for your order – Example Shop");

export const PRODUCT_BY_PAGE = new Map<number, Product>(PRODUCTS.map((p) => [p.page, p]));

const spread = (pages: readonly number[], weight: number): Array<readonly [number, number]> =>
  pages.map((p) => [p, weight / pages.length] as const);

export const SITE_ENTRY: Readonly<Record<EntryKind, WeightTable<number>>> = {
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

export const SITE_NEXT = weightTable<number>([
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

export const SHOP_ENTRY = weightTable<number>([
  [SHOP_HOME, 4],
  ...spread(
    PRODUCTS.map((p) => p.page),
    4,
  ),
  [SHOP_APPAREL, 1.5],
  [SHOP_ACCESSORIES, 1],
]);

export const SHOP_NEXT = weightTable<number>([
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

export const SCREEN_VIEW = 0;
export const BUTTON_CLICK = 1;
export const SIGNUP = 2;
export const ADD_TO_CART = 3;
export const PURCHASE = 4;
export const EVENT_NAMES = ["screen_view", "button_click", "signup", "add_to_cart", "purchase"] as const;

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

export const CLICKS: ReadonlyArray<readonly [string, string]> = [
  ["get_started", "hero"],
  ["book_demo", "header"],
  ["read_docs", "nav"],
  ["newsletter_subscribe", "footer"],
  ["copy_snippet", "docs"],
];
export const PLANS = weightTable<readonly [string, number]>([
  [["free", 0], 50],
  [["pro", 49], 35],
  [["team", 99], 15],
]);
export const SIGNUP_METHODS = ["email", "google", "github"] as const;
export const VARIANTS = ["A", "B"] as const;
