import { type AnalyticsClient, createAnalyticsClient, type Filter, type Problem } from "../../client";
import { drawLines } from "./charts";
import { formatInteger } from "./format";
import { renderMessage, renderTable, renderTiles, type TableRow } from "./panels";
import {
  type BoardState,
  type Credentials,
  describeFilter,
  filterFor,
  parseRange,
  readState,
  sameFilter,
  stateUrl,
  storeCredentials,
  storedCredentials,
} from "./state";

type Dimension = "referrer_name" | "country" | "device" | "browser" | "utm_source";
const DIMENSIONS: Dimension[] = ["referrer_name", "country", "device", "browser", "utm_source"];
const LIVE_EVERY_MS = 10_000;

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const ui = {
  error: byId<HTMLParagraphElement>("error"),
  login: byId<HTMLFormElement>("login"),
  controls: byId<HTMLFormElement>("controls"),
  board: byId<HTMLDivElement>("board"),
  project: byId<HTMLInputElement>("project"),
  range: byId<HTMLSelectElement>("range"),
  chips: byId<HTMLUListElement>("chips"),
  tiles: byId<HTMLElement>("tiles"),
  live: byId<HTMLSpanElement>("live"),
  seriesChart: byId<HTMLDivElement>("series-chart"),
  eventName: byId<HTMLSelectElement>("event-name"),
  eventBy: byId<HTMLSelectElement>("event-by"),
  eventChart: byId<HTMLDivElement>("event-chart"),
};
const panel = (name: string) =>
  document.querySelector<HTMLElement>(`[data-panel="${name}"] .table`) as HTMLElement;

let state: BoardState = readState(window.location);
let api: AnalyticsClient | undefined;
let liveTimer: number | undefined;
/** Each load has a number; answers of an older load are dropped (the user changed something). */
let generation = 0;
/**
 * The event panel's own requests are numbered too: a pick of an event or a property starts new
 * ones without a new load, and an older answer arriving later must not draw over a newer one.
 */
const latest = { properties: 0, chart: 0 };

/** A failed answer as the API explains it (problem+json `detail`), or the status. */
class ProblemError extends Error {
  constructor(
    readonly status: number,
    problem: unknown,
  ) {
    const detail = (problem as Partial<Problem> | undefined)?.detail;
    super(typeof detail === "string" ? detail : `The API answered ${status}.`);
  }
}

function need<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new ProblemError(result.response.status, result.error);
  return result.data;
}

function showError(error: unknown): void {
  ui.error.textContent = error instanceof Error ? error.message : String(error);
  ui.error.hidden = false;
  if (error instanceof ProblemError && error.status === 401) signOut(false);
}

const window_ = () => ({ range: state.range, filters: state.filters });

async function loadMetrics(client: AnalyticsClient, load: number): Promise<void> {
  const projectId = state.project;
  const answer = need(
    await client.GET("/insights/{projectId}/metrics", {
      params: { path: { projectId }, query: { ...window_(), previous: true } },
    }),
  );
  if (load !== generation) return;
  renderTiles(ui.tiles, answer.metrics, answer.previous?.metrics);
  drawLines(
    ui.seriesChart,
    answer.series.map((point) => point.date),
    [
      { label: "Visitors", values: answer.series.map((point) => point.unique_visitors) },
      { label: "Sessions", values: answer.series.map((point) => point.total_sessions) },
    ],
  );
}

async function loadPages(client: AnalyticsClient, load: number): Promise<void> {
  const rows = need(
    await client.GET("/insights/{projectId}/pages", {
      params: { path: { projectId: state.project }, query: { ...window_(), limit: 10 } },
    }),
  );
  if (load !== generation) return;
  const host = (origin: string | null) => (origin ? origin.replace(/^[a-z]+:\/\//, "") : undefined);
  const table: TableRow[] = rows.map((row) => ({
    label: row.path,
    note: host(row.origin),
    cells: [row.sessions, row.pageviews],
  }));
  renderTable(panel("pages"), ["Path", "Sessions", "Views"], table, (value) =>
    addFilter(filterFor("path", value)),
  );
}

async function loadBreakdown(client: AnalyticsClient, dimension: Dimension, load: number): Promise<void> {
  const rows = need(
    await client.GET("/insights/{projectId}/{dimension}", {
      params: { path: { projectId: state.project, dimension }, query: { ...window_(), limit: 10 } },
    }),
  );
  if (load !== generation) return;
  const table: TableRow[] = rows.map((row) => ({ label: row.name, cells: [row.sessions] }));
  renderTable(panel(dimension), ["Value", "Sessions"], table, (value) =>
    addFilter(filterFor(dimension, value)),
  );
}

/** Fills a picker with `values` (after a first "none" option when `none` is given). */
function fillPicker(select: HTMLSelectElement, values: string[], selected: string, none?: string): void {
  const option = (value: string, label: string) => {
    const node = document.createElement("option");
    node.value = value;
    node.textContent = label;
    node.selected = value === selected;
    return node;
  };
  select.replaceChildren(
    ...(none === undefined ? [] : [option("", none)]),
    ...values.map((value) => option(value, value)),
  );
}

/** The event picker from the discovery names, then the property picker and the chart. */
async function loadEventNames(client: AnalyticsClient, load: number): Promise<void> {
  const names = need(
    await client.GET("/insights/{projectId}/events/names", {
      params: { path: { projectId: state.project }, query: { limit: 100 } },
    }),
  );
  if (load !== generation) return;
  if (!state.event || !names.includes(state.event)) state.event = names[0] ?? "";
  fillPicker(ui.eventName, names, state.event);
  await loadEventProperties(client, load);
}

/** The properties the chosen event carries (discovery), to break its chart down by one of them. */
async function loadEventProperties(client: AnalyticsClient, load: number): Promise<void> {
  const request = ++latest.properties;
  const keys = state.event
    ? need(
        await client.GET("/insights/{projectId}/events/properties", {
          params: { path: { projectId: state.project }, query: { eventName: state.event } },
        }),
      )
        .properties.filter((row) => row.event_name === state.event)
        .map((row) => `properties.${row.property_key}`)
    : [];
  if (load !== generation || request !== latest.properties) return;
  if (!keys.includes(state.by)) state.by = "";
  fillPicker(ui.eventBy, keys, state.by, "nothing");
  await loadEventChart(client, load);
}

async function loadEventChart(client: AnalyticsClient, load: number): Promise<void> {
  const request = ++latest.chart;
  if (!state.event) {
    renderMessage(ui.eventChart, "No events in this project yet.", "empty");
    return;
  }
  const chart = need(
    await client.GET("/export/charts", {
      params: {
        query: {
          projectId: state.project,
          series: [{ name: state.event }],
          ...(state.by ? { breakdowns: [{ name: state.by }], limit: 5 } : {}),
          interval: state.range === "today" ? "hour" : "day",
          ...window_(),
        },
      },
    }),
  );
  if (load !== generation || request !== latest.chart) return;
  const dates = chart.series[0]?.data.map((point) => point.date) ?? [];
  drawLines(
    ui.eventChart,
    dates,
    chart.series.map((series) => ({
      label: series.names.slice(1).join(" · ") || series.names[0] || state.event,
      values: series.data.map((point) => point.count),
    })),
  );
}

async function refreshLive(client: AnalyticsClient): Promise<void> {
  const answer = need(
    await client.GET("/insights/{projectId}/live", { params: { path: { projectId: state.project } } }),
  );
  const noun = answer.visitors === 1 ? "visitor" : "visitors";
  ui.live.textContent = `${formatInteger(answer.visitors)} ${noun} in the last 5 minutes`;
}

function renderChips(): void {
  ui.chips.replaceChildren(
    ...state.filters.map((filter) => {
      const chip = document.createElement("li");
      chip.className = "chip";
      chip.textContent = describeFilter(filter);
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "×";
      remove.setAttribute("aria-label", `Remove filter ${describeFilter(filter)}`);
      remove.addEventListener("click", () => removeFilter(filter));
      chip.append(remove);
      return chip;
    }),
  );
}

/** Loads every panel for the current state; the board shows the first failure's message. */
async function loadBoard(): Promise<void> {
  if (!api) return;
  const client = api;
  const load = ++generation;
  history.replaceState(null, "", stateUrl(state));
  ui.project.value = state.project;
  ui.range.value = state.range;
  ui.error.hidden = true;
  renderChips();
  ui.board.dataset.loading = "true";
  const tasks = [
    loadMetrics(client, load),
    loadPages(client, load),
    ...DIMENSIONS.map((dimension) => loadBreakdown(client, dimension, load)),
    loadEventNames(client, load),
    refreshLive(client),
  ];
  const results = await Promise.allSettled(tasks);
  if (load !== generation) return;
  const failed = results.find((result) => result.status === "rejected");
  if (failed) showError(failed.reason);
  ui.board.dataset.loading = "false";
}

function addFilter(filter: Filter): void {
  if (state.filters.some((existing) => sameFilter(existing, filter))) return;
  state = { ...state, filters: [...state.filters, filter] };
  void loadBoard();
}

function removeFilter(filter: Filter): void {
  state = { ...state, filters: state.filters.filter((existing) => !sameFilter(existing, filter)) };
  void loadBoard();
}

function openBoard(credentials: Credentials): void {
  api = createAnalyticsClient({ baseUrl: window.location.origin, ...credentials });
  ui.login.hidden = true;
  ui.controls.hidden = false;
  ui.board.hidden = false;
  window.clearInterval(liveTimer);
  liveTimer = window.setInterval(() => {
    if (api) refreshLive(api).catch(() => undefined);
  }, LIVE_EVERY_MS);
  void loadBoard();
}

function signOut(clearError = true): void {
  api = undefined;
  window.clearInterval(liveTimer);
  storeCredentials(undefined);
  ui.board.hidden = true;
  ui.controls.hidden = true;
  ui.login.hidden = false;
  byId<HTMLInputElement>("login-project").value = state.project;
  if (clearError) ui.error.hidden = true;
}

/** Under `npm run dev` the Worker hands out the demo read client, so the board opens at once. */
async function demoClient(): Promise<(Credentials & { projectId: string }) | undefined> {
  const response = await fetch("/dashboard/demo-client").catch(() => undefined);
  return response?.ok ? ((await response.json()) as Credentials & { projectId: string }) : undefined;
}

ui.login.addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(ui.login);
  const credentials = {
    clientId: String(form.get("clientId")),
    clientSecret: String(form.get("clientSecret")),
  };
  state = { ...state, project: String(form.get("project")).trim(), filters: [] };
  storeCredentials(credentials);
  openBoard(credentials);
});
ui.controls.addEventListener("submit", (event) => event.preventDefault());
ui.range.addEventListener("change", () => {
  state = { ...state, range: parseRange(ui.range.value) };
  void loadBoard();
});
ui.project.addEventListener("change", () => {
  state = { ...state, project: ui.project.value.trim(), filters: [], event: "", by: "" };
  void loadBoard();
});
ui.eventName.addEventListener("change", () => {
  state = { ...state, event: ui.eventName.value, by: "" };
  history.replaceState(null, "", stateUrl(state));
  if (api) loadEventProperties(api, generation).catch(showError);
});
ui.eventBy.addEventListener("change", () => {
  state = { ...state, by: ui.eventBy.value };
  history.replaceState(null, "", stateUrl(state));
  if (api) loadEventChart(api, generation).catch(showError);
});
byId<HTMLButtonElement>("logout").addEventListener("click", () => signOut());

async function start(): Promise<void> {
  const stored = storedCredentials();
  if (stored && state.project) {
    openBoard(stored);
    return;
  }
  const demo = await demoClient();
  if (demo) {
    state = { ...state, project: state.project || demo.projectId };
    storeCredentials(demo);
    openBoard({ clientId: demo.clientId, clientSecret: demo.clientSecret });
    return;
  }
  signOut(false);
}

void start();
