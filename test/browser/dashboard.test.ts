import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEMO_READ_CLIENT } from "../../scripts/seed/demo-fixtures";

/**
 * The reference dashboard (dashboard/, served at / from the Worker's static assets) in a real
 * browser: Debian's Chromium driven by playwright-core, against `wrangler dev` on a seeded
 * database of its own (test/support/browser/global-setup.ts). What the page shows is checked
 * against the API's own answers.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// CI installs Chromium (.ci/run); a laptop without it skips this file rather than fail.
const canRun = existsSync(CHROMIUM) || process.env.CI === "true";
const SCREENSHOT = path.resolve(process.env.DASHBOARD_SCREENSHOT ?? ".wrangler/dashboard.png");
const PANELS = ["metrics", "pages", "referrer_name", "country", "device", "browser", "utm_source", "charts"];

const demoRead = DEMO_READ_CLIENT;
const headers = { "openpanel-client-id": demoRead.id, "openpanel-client-secret": demoRead.secret };

const server = { base: inject("e2eBase") };
let browser: Browser;

async function api<T>(
  pathAndQuery: string,
  init: RequestInit = { headers },
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server.base}${pathAndQuery}`, init);
  return { status: response.status, body: (await response.json()) as T };
}

/** Which panel an API request feeds, by its path (undefined for requests that take no filters). */
function panelOf(url: URL): string | undefined {
  if (url.pathname === "/export/charts") return "charts";
  const match = /^\/insights\/demo\/([a-z_]+)$/.exec(url.pathname);
  const name = match?.[1];
  return name && PANELS.includes(name) ? name : undefined;
}

async function waitForBoard(page: Page): Promise<void> {
  await page.waitForFunction(
    () => document.querySelector("#board")?.getAttribute("data-loading") === "false",
    null,
    {
      timeout: 30_000,
    },
  );
}

async function signIn(page: Page, secret: string): Promise<void> {
  await page.goto(server.base);
  await page.getByLabel("Client id").fill(demoRead.id);
  await page.getByLabel("Client secret").fill(secret);
  await page.locator("#login-project").fill("demo");
  await page.getByRole("button", { name: "Open the dashboard" }).click();
}

async function tileValues(page: Page): Promise<Record<string, number>> {
  const pairs = await page
    .locator(".tile")
    .evaluateAll((tiles) =>
      tiles.map((tile) => [(tile as HTMLElement).dataset.metric, (tile as HTMLElement).dataset.value]),
    );
  return Object.fromEntries(pairs.map(([metric, value]) => [String(metric), Number(value)]));
}

async function tableRows(page: Page, panel: string): Promise<Array<[string, string]>> {
  return page
    .locator(`[data-panel="${panel}"] tbody tr`)
    .evaluateAll((rows) =>
      rows.map((row) => [row.children[0]?.firstChild?.textContent ?? "", row.children[1]?.textContent ?? ""]),
    );
}

describe.skipIf(!canRun)("the dashboard in Chromium", () => {
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // As root in a container, and on a machine whose network is closed: no sandbox, no
      // background connections that would be refused.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("signs in with the demo read client and shows the numbers of /metrics and the breakdowns", async () => {
    await signIn(page, demoRead.secret);
    await waitForBoard(page);
    expect(await page.locator("#error").isHidden()).toBe(true);
    expect(new URL(page.url()).searchParams.get("project")).toBe("demo");

    const metrics = await api<{
      metrics: Record<string, number>;
      previous: { metrics: Record<string, number> };
    }>("/insights/demo/metrics?range=30d&previous=true");
    expect(metrics.status).toBe(200);
    expect(await tileValues(page)).toEqual(metrics.body.metrics);
    expect(metrics.body.metrics.total_sessions).toBeGreaterThan(0);
    // Each tile's change against the previous period, as the API's two periods give it.
    const changes = await page
      .locator(".tile")
      .evaluateAll((tiles) =>
        tiles.map((tile) => [
          (tile as HTMLElement).dataset.metric,
          tile.querySelector(".change")?.textContent,
        ]),
      );
    const decimal = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
    for (const [metric, text] of changes) {
      const now = metrics.body.metrics[metric ?? ""] ?? 0;
      const before = metrics.body.previous.metrics[metric ?? ""] ?? 0;
      const change = ((now - before) / before) * 100;
      const expected =
        before === 0
          ? "0 in the previous period"
          : `${change > 0 ? "+" : ""}${decimal.format(change)} % vs previous period`;
      expect({ metric, text }).toEqual({ metric, text: expected });
    }

    const countries = await api<Array<{ name: string | null; sessions: number }>>(
      "/insights/demo/country?range=30d&limit=10",
    );
    expect(await tableRows(page, "country")).toEqual(
      countries.body.map((row) => [row.name ?? "(not set)", row.sessions.toLocaleString("en-US")]),
    );
    // The visitors/sessions chart and the event chart drew (uPlot canvases).
    expect(await page.locator("#series-chart canvas").count()).toBe(1);
    expect(await page.locator("#event-chart canvas").count()).toBe(1);
    const live = await api<{ visitors: number }>("/insights/demo/live");
    expect(await page.locator("#live").textContent()).toBe(
      `${live.body.visitors} ${live.body.visitors === 1 ? "visitor" : "visitors"} in the last 5 minutes`,
    );
  });

  it("filters every panel by a clicked country, keeps it in the URL, and saves a screenshot", async () => {
    const requested = new Map<string, URL>();
    page.on("request", (request) => {
      const url = new URL(request.url());
      const panel = panelOf(url);
      if (panel) requested.set(panel, url);
    });
    const firstCountry = page.locator('[data-panel="country"] tbody tr').first();
    const country = await firstCountry.getAttribute("data-value");
    expect(country).toMatch(/^[A-Z]{2}$/);
    await firstCountry.click();
    await waitForBoard(page);

    const filter = [{ name: "country", operator: "is", value: [country] }];
    expect(JSON.parse(new URL(page.url()).searchParams.get("filters") ?? "[]")).toEqual(filter);
    expect(await page.locator("#chips li").count()).toBe(1);
    expect([...requested.keys()].sort()).toEqual([...PANELS].sort());
    for (const [panel, url] of requested) {
      expect(JSON.parse(url.searchParams.get("filters") ?? "[]"), panel).toEqual(filter);
    }

    const filters = encodeURIComponent(JSON.stringify(filter));
    const metrics = await api<{ metrics: Record<string, number> }>(
      `/insights/demo/metrics?range=30d&filters=${filters}`,
    );
    expect(await tileValues(page)).toEqual(metrics.body.metrics);
    expect(await tableRows(page, "country")).toEqual([
      [country ?? "", metrics.body.metrics.total_sessions?.toLocaleString("en-US") ?? ""],
    ]);

    // The URL alone reopens the same view.
    await page.reload();
    await waitForBoard(page);
    expect(await page.locator("#chips li").allTextContents()).toEqual([`country is ${country}×`]);
    expect(await tileValues(page)).toEqual(metrics.body.metrics);

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
  });

  it("charts an event broken down by one of its properties, both picked from the discovery routes", async () => {
    const discovered = await api<{ properties: Array<{ property_key: string; event_name: string }> }>(
      "/insights/demo/events/properties",
    );
    const pick = discovered.body.properties[0];
    expect(pick).toBeDefined();
    const event = pick?.event_name ?? "";
    const by = `properties.${pick?.property_key}`;
    await page.selectOption("#event-name", event);
    await page.waitForFunction(
      (value) =>
        Array.from(document.querySelectorAll<HTMLOptionElement>("#event-by option")).some(
          (option) => option.value === value,
        ),
      by,
    );
    const charted = page.waitForResponse((response) => {
      const url = new URL(response.url());
      return url.pathname === "/export/charts" && url.searchParams.get("breakdowns") !== null;
    });
    await page.selectOption("#event-by", by);
    const response = await charted;
    const url = new URL(response.url());
    expect(JSON.parse(url.searchParams.get("series") ?? "")).toEqual([{ name: event }]);
    expect(JSON.parse(url.searchParams.get("breakdowns") ?? "")).toEqual([{ name: by }]);
    expect(new URL(page.url()).searchParams.get("by")).toBe(by);
    // The legend names the API's series, in its order.
    const chart = await api<{ series: Array<{ names: string[] }> }>(`${url.pathname}${url.search}`);
    expect(chart.body.series.length).toBeGreaterThan(0);
    // (uPlot's legend lists the x series too only in its live mode; the lines are its last rows.)
    const expected = chart.body.series.map((series) => series.names.slice(1).join(" · "));
    await page.waitForFunction((labels) => {
      const shown = Array.from(document.querySelectorAll("#event-chart .u-legend .u-series .u-label"));
      return (
        JSON.stringify(shown.slice(-labels.length).map((node) => node.textContent)) === JSON.stringify(labels)
      );
    }, expected);
    const legend = await page.locator("#event-chart .u-legend .u-series .u-label").allTextContents();
    expect(legend.slice(-expected.length)).toEqual(expected);
    expect(legend.length).toBeLessThanOrEqual(expected.length + 1);
  });

  it("shows the API's own message for a wrong secret and stays on the sign-in form", async () => {
    // The same tab, whose HTTP cache holds the answers fetched with the right secret: they must
    // not be reused for the wrong one (the answers vary on the credential headers).
    await page.getByRole("button", { name: "Sign out" }).click();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await signIn(page, "not-the-secret");
    await page.locator("#error").waitFor({ state: "visible" });
    const refused = await api<{ detail: string }>("/insights/demo/metrics?range=30d", {
      headers: { ...headers, "openpanel-client-secret": "not-the-secret" },
    });
    expect(refused.status).toBe(401);
    expect(await page.locator("#error").textContent()).toBe(refused.body.detail);
    expect(await page.locator("#login").isVisible()).toBe(true);
    expect(await page.locator("#board").isHidden()).toBe(true);
  });
});
