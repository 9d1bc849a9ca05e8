import type { components } from "../../client";
import {
  formatDecimal,
  formatDuration,
  formatInteger,
  formatPercent,
  formatRevenue,
  percentChange,
} from "./format";

type Metrics = components["schemas"]["MetricsResponse"]["metrics"];
type MetricName = keyof Metrics;

/** The tiles, in order: the metric, its label, how it reads, and whether a rise is good news. */
const TILES: ReadonlyArray<{
  metric: MetricName;
  label: string;
  format: (n: number) => string;
  upIsGood: boolean;
}> = [
  { metric: "unique_visitors", label: "Visitors", format: formatInteger, upIsGood: true },
  { metric: "total_sessions", label: "Sessions", format: formatInteger, upIsGood: true },
  { metric: "total_screen_views", label: "Page views", format: formatInteger, upIsGood: true },
  { metric: "views_per_session", label: "Views per session", format: formatDecimal, upIsGood: true },
  { metric: "bounce_rate", label: "Bounce rate", format: formatPercent, upIsGood: false },
  { metric: "avg_session_duration", label: "Session duration", format: formatDuration, upIsGood: true },
  { metric: "total_revenue", label: "Revenue", format: formatRevenue, upIsGood: true },
];

function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** Each tile keeps the raw number in `data-value`, so a test can compare it with the API's. */
export function renderTiles(target: HTMLElement, current: Metrics, previous: Metrics | undefined): void {
  target.replaceChildren(
    ...TILES.map(({ metric, label, format, upIsGood }) => {
      const tile = element("div", undefined, "tile");
      tile.dataset.metric = metric;
      tile.dataset.value = String(current[metric]);
      const value = element("div", format(current[metric]), "value");
      tile.append(element("h3", label), value);
      const change = previous ? percentChange(current[metric], previous[metric]) : undefined;
      if (change !== undefined) {
        const good = change === 0 ? undefined : change > 0 === upIsGood;
        const sign = change > 0 ? "+" : "";
        const note = element(
          "div",
          `${sign}${formatDecimal(change)} % vs previous period`,
          `change${good === undefined ? "" : good ? " up" : " down"}`,
        );
        tile.append(note);
      } else if (previous) {
        // A change from 0 has no percentage (the demo data's previous period is empty).
        tile.append(element("div", "0 in the previous period", "change"));
      }
      return tile;
    }),
  );
}

export interface TableRow {
  label: string | null;
  /** Shown beside the label, muted (a page's host, where pages of several hosts share a path). */
  note?: string;
  cells: number[];
}

/**
 * A ranked table whose rows are buttons: activating one calls `onPick` with the row's value
 * (null for "not set"), which the board turns into a filter.
 */
export function renderTable(
  target: HTMLElement,
  headings: string[],
  rows: TableRow[],
  onPick: (value: string | null) => void,
): void {
  if (rows.length === 0) {
    target.replaceChildren(element("p", "Nothing in this window.", "empty"));
    return;
  }
  const table = element("table");
  const head = element("tr");
  headings.forEach((heading, index) => {
    const th = element("th", heading, index > 0 ? "num" : undefined);
    th.scope = "col";
    head.append(th);
  });
  table.append(element("thead"), element("tbody"));
  table.tHead?.append(head);
  for (const row of rows) {
    const tr = element("tr", undefined, "row");
    tr.tabIndex = 0;
    tr.dataset.value = row.label ?? "";
    tr.title = "Filter the board by this value";
    const first = element("td", row.label ?? "(not set)");
    if (row.note) first.append(element("span", row.note, "origin"));
    tr.append(first);
    for (const cell of row.cells) tr.append(element("td", formatInteger(cell), "num"));
    const pick = () => onPick(row.label);
    tr.addEventListener("click", pick);
    tr.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        pick();
      }
    });
    table.tBodies[0]?.append(tr);
  }
  target.replaceChildren(table);
}

export function renderMessage(target: HTMLElement, text: string, className = "loading"): void {
  target.replaceChildren(element("p", text, className));
}
