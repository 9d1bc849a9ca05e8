import {
  ADD_TO_CART,
  BUTTON_CLICK,
  CART,
  CHECKOUT,
  CHECKOUT_SUCCESS,
  CLICKS,
  PLANS,
  PRICING,
  PRODUCT_BY_PAGE,
  PURCHASE,
  SCREEN_VIEW,
  SHOP_ENTRY,
  SHOP_NEXT,
  SIGNUP,
  SIGNUP_METHODS,
  SIGNUP_PAGE,
  SITE_ENTRY,
  SITE_NEXT,
  VARIANTS,
  WELCOME,
} from "./catalogue-site";
import {
  CAMPAIGN_SHARE,
  CAMPAIGNS,
  type Channel,
  type EntryKind,
  ORGANIC_CHANNELS,
} from "./catalogue-sources";
import { copyText, MINUTE, NULL } from "./copy-text";
import { pickWeighted, type Rng, type WeightTable } from "./random";

/**
 * What each demo session does, before it has a visitor or a start time: where it comes from
 * (a channel or a campaign), then its pages and events on the site or in the shop, as offsets
 * from the session's start. Draws from the generator's traffic stream only.
 */

/** Gaps inside a session stay well below 30 minutes. */
const MAX_GAP_MS = 25 * MINUTE;

export const NULL_REFERRER_BLOCK = Array.from({ length: 8 }, () => NULL).join("\t");
const NULL_UTM_BLOCK = `\t${Array.from({ length: 5 }, () => NULL).join("\t")}`;

/** Per-hour scratch space for sessions before they get start times (reused; grows as needed). */
export class HourBuffer {
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

/** Decides one session's events (types, pages, offsets) into the hour buffer. */
export function planSession(rng: Rng, projects: WeightTable<number>, hour: HourBuffer): void {
  const s = hour.sessionCount++;
  hour.sessionProject[s] = pickWeighted(rng, projects);
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
  if (shop) planShop(rng, hour, views);
  else planSite(rng, hour, views, entry);
  hour.sessionLength[s] = hour.eventCount - (hour.sessionFirst[s] ?? 0);
}

function planSite(rng: Rng, hour: HourBuffer, views: number, entry: EntryKind): void {
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

function planShop(rng: Rng, hour: HourBuffer, plannedViews: number): void {
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
