import { weightTable } from "./random";

/**
 * Where the demo traffic comes from: referring channels (search, social, links, email) and the
 * UTM-tagged campaigns. Part of the seed's catalogue.
 */

export type EntryKind = "direct" | "search" | "social" | "link" | "email" | "paid";

export interface Channel {
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

export const ORGANIC_CHANNELS = weightTable<Channel>([
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

export const CAMPAIGNS = weightTable<Campaign>([
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
export const CAMPAIGN_SHARE = 0.18;
