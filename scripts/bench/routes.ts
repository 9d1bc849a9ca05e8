import type pg from "pg";
import { BENCH_PROJECT, benchWindow } from "./cases";
import {
  type ApiClient,
  apiGetOk,
  fmtMs,
  measure,
  progress,
  RunFailure,
  summarize,
  type TimingSummary,
} from "./measure";
import type { BenchOptions } from "./options";

/**
 * The routes of issue 17 (discovery, the event listing, OpenPanel's overview, page and traffic
 * routes), uncached through the whole path, each beside the plain SQL a user would write over
 * `events` for the same answer. The values they ask for (an event name, a property key) are read
 * from the data, never fixed here.
 */

export interface RouteCase {
  id: string;
  label: string;
  /** The p50 target, ms. */
  targetMs: number;
  path: string;
  sql: { text: string; values: unknown[] };
  /** What the report says beside the figures: why a target may be missed, what the baseline is. */
  note?: string;
}

export interface RouteResult {
  id: string;
  label: string;
  targetMs: number;
  note?: string;
  api: TimingSummary;
  sql: TimingSummary;
}

/** The most frequent (event name, top-level property key) pair of a sample of the data set. */
async function pickedValues(db: pg.Client): Promise<{ property: string; propertyOf: string }> {
  const pair = await db.query<{ name: string; key: string }>(
    `SELECT name, key FROM (SELECT name, properties FROM events WHERE project_id = $1 AND properties <> '{}' LIMIT 10000) AS sample,
       jsonb_object_keys(properties) AS key GROUP BY name, key ORDER BY count(*) DESC, name, key LIMIT 1`,
    [BENCH_PROJECT],
  );
  return {
    property: pair.rows[0]?.key ?? "plan",
    propertyOf: pair.rows[0]?.name ?? "screen_view",
  };
}

export async function planRoutes(db: pg.Client, dataEnd: Date): Promise<RouteCase[]> {
  const { property, propertyOf } = await pickedValues(db);
  const window = benchWindow(30, dataEnd);
  const range = `startDate=${window.startDate}&endDate=${window.endDate}&timezone=UTC`;
  const project = `/insights/${BENCH_PROJECT}`;
  const inWindow = "project_id = $1 AND created_at >= $2 AND created_at < $3";
  const windowValues = [BENCH_PROJECT, window.start, window.end];
  const sessionsSql = `SELECT session_id, min(created_at) AS started, count(*) FILTER (WHERE name = 'screen_view') AS views
    FROM events WHERE ${inWindow} GROUP BY session_id`;
  return [
    {
      id: "names",
      label: "/events/names",
      targetMs: 20,
      path: `${project}/events/names`,
      sql: {
        text: "SELECT name FROM events WHERE project_id = $1 GROUP BY name ORDER BY count(*) DESC, name LIMIT 50",
        values: [BENCH_PROJECT],
      },
    },
    {
      id: "properties",
      label: "/events/properties",
      targetMs: 20,
      path: `${project}/events/properties`,
      sql: {
        text: "SELECT DISTINCT key, name FROM events, jsonb_object_keys(properties) AS key WHERE project_id = $1 ORDER BY 1, 2",
        values: [BENCH_PROJECT],
      },
    },
    {
      id: "property_values",
      label: `/events/property_values (${property} of ${propertyOf})`,
      targetMs: 20,
      path: `${project}/events/property_values?propertyKey=${encodeURIComponent(property)}&eventName=${encodeURIComponent(propertyOf)}&counts=true`,
      sql: {
        text: `SELECT properties->>$2 AS value, count(*) FROM events WHERE project_id = $1 AND name = $3
          AND properties ? $2 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 200`,
        values: [BENCH_PROJECT, property, propertyOf],
      },
    },
    {
      id: "events",
      label: "/events (first page of 30 days)",
      targetMs: 30,
      path: `${project}/events?${range}`,
      note: "The plain SQL of a first page is the same index scan the listing runs; what it adds is the Worker's path (about 2 ms of floor, the cursor, the flattened properties).",
      sql: {
        text: `SELECT * FROM events WHERE ${inWindow} ORDER BY created_at DESC, id DESC LIMIT 20`,
        values: windowValues,
      },
    },
    {
      id: "sessions",
      label: "/sessions (first page of 30 days)",
      targetMs: 30,
      path: `${project}/sessions?${range}`,
      sql: {
        text: `SELECT session_id, min(created_at) AS started, max(created_at), count(*) FROM events WHERE ${inWindow}
          GROUP BY session_id ORDER BY started DESC, session_id DESC LIMIT 20`,
        values: windowValues,
      },
      note: "The plain SQL has to group the window's events into sessions before it can sort them; the listing reads the derived sessions by their start.",
    },
    {
      id: "overview",
      label: "/overview (30 days, daily)",
      targetMs: 50,
      path: `${project}/overview?${range}`,
      sql: {
        text: `SELECT date_trunc('day', started), count(*), count(*) FILTER (WHERE views <= 1), sum(views)
          FROM (${sessionsSql}) AS s GROUP BY 1 ORDER BY 1`,
        values: windowValues,
      },
    },
    {
      id: "pages_top",
      label: "/pages/top (30 days)",
      targetMs: 50,
      path: `${project}/pages/top?${range}`,
      sql: {
        text: `SELECT origin, path, count(DISTINCT session_id), count(*) FROM events WHERE ${inWindow} AND name = 'screen_view'
          GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1000`,
        values: windowValues,
      },
    },
    {
      id: "pages_performance",
      label: "/pages/performance (30 days)",
      targetMs: 50,
      path: `${project}/pages/performance?${range}&sortBy=bounce_rate`,
      sql: {
        text: `SELECT origin, path, count(DISTINCT session_id), count(*), avg(duration) FROM events
          WHERE ${inWindow} AND name = 'screen_view' GROUP BY 1, 2 ORDER BY 4 DESC LIMIT 50`,
        values: windowValues,
      },
    },
    {
      id: "entry_exit",
      label: "/pages/entry_exit (30 days)",
      targetMs: 50,
      path: `${project}/pages/entry_exit?${range}`,
      note: "Reads the window's sessions (the exact path of a breakdown): no rollup holds entry and exit pages yet, so its cost grows with the window's traffic.",
      sql: {
        text: `SELECT path, count(*) FROM (SELECT DISTINCT ON (session_id) session_id, path FROM events
          WHERE ${inWindow} AND name = 'screen_view' ORDER BY session_id, created_at) AS entries GROUP BY 1 ORDER BY 2 DESC`,
        values: windowValues,
      },
    },
    {
      id: "traffic_geo",
      label: "/traffic/geo (30 days)",
      targetMs: 50,
      path: `${project}/traffic/geo?${range}`,
      sql: {
        text: `SELECT country, count(*) FROM (SELECT DISTINCT ON (session_id) session_id, country FROM events
          WHERE ${inWindow} ORDER BY session_id, created_at) AS first_events GROUP BY 1 ORDER BY 2 DESC`,
        values: windowValues,
      },
    },
  ];
}

export async function measureRoutes(
  client: ApiClient,
  db: pg.Client,
  options: BenchOptions,
  dataEnd: Date,
): Promise<RouteResult[]> {
  const results: RouteResult[] = [];
  await db.query(`SET statement_timeout = ${Math.round(options.baselineTimeoutSeconds * 1000)}`);
  try {
    for (const route of await planRoutes(db, dataEnd)) {
      const api = summarize(
        await measure(options.runs, options.budgetSeconds * 1000, async () => {
          await apiGetOk(client, route.path, true);
        }),
      );
      const sql = summarize(
        await measure(options.runs, options.budgetSeconds * 1000, async () => {
          try {
            await db.query(route.sql.text, route.sql.values);
          } catch (error) {
            throw new RunFailure(error instanceof Error ? error.message : String(error));
          }
        }),
      );
      progress(`  ${route.label}: p50 ${fmtMs(api.p50)} (plain SQL ${fmtMs(sql.p50)})`);
      results.push({
        id: route.id,
        label: route.label,
        targetMs: route.targetMs,
        note: route.note,
        api,
        sql,
      });
    }
  } finally {
    await db.query("RESET statement_timeout");
  }
  return results;
}

/** The report's section for these routes. */
export function routesSection(
  results: readonly RouteResult[] | undefined,
  skipped: string | undefined,
): string[] {
  const lines = ["## Routes of issue 17 (uncached, 30-day window where there is one)", ""];
  if (!results) return [...lines, `Not measured: ${skipped ?? "not run"}.`, ""];
  lines.push(
    "| route | target p50 | p50 | p95 | plain SQL p50 | speed-up | verdict |",
    "|---|--:|--:|--:|--:|--:|---|",
  );
  for (const r of results) {
    const speedUp = r.api.p50 && r.sql.p50 ? `${(r.sql.p50 / r.api.p50).toFixed(1)}×` : "–";
    const errors =
      Object.keys(r.api.errors).length > 0 ? ` (errors: ${Object.keys(r.api.errors).join("; ")})` : "";
    const verdict = r.api.p50 === undefined ? "not measured" : r.api.p50 <= r.targetMs ? "met" : "missed";
    lines.push(
      `| ${r.label} | ≤ ${r.targetMs} ms | ${fmtMs(r.api.p50)} | ${fmtMs(r.api.p95)} | ${fmtMs(r.sql.p50)} | ${speedUp} | ${verdict}${errors} |`,
    );
  }
  lines.push("");
  for (const r of results) if (r.note) lines.push(`- ${r.label}: ${r.note}`);
  if (results.some((r) => r.note)) lines.push("");
  return lines;
}
