import type pg from "pg";
import { encodeListingCursor } from "../../src/lib/cursors";
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
 * The routes of issues 17 and 18 (discovery, the listings and profiles, OpenPanel's overview, page
 * and traffic routes, the analyses), uncached through the whole path, each beside the plain SQL a user would write over
 * `events` for the same answer. The values they ask for (an event name, a property key, a
 * profile) are read from the data, never fixed here.
 */

/** How deep the deep listing pages start: a million rows, or the listing's last page when it is shorter. */
const DEPTH = 1_000_000;

export interface RouteCase {
  id: string;
  label: string;
  /** The issue's p50 target, ms. */
  targetMs: number;
  path: string;
  sql: { text: string; values: unknown[] };
  /** What the report says beside the figures: why a target may be missed, what the baseline is. */
  note?: string;
  /**
   * A keyset page deep in the listing: the row at this depth of the listing's order, read by SQL
   * (columns `t`, epoch ms, and `i`, the id), becomes the position of a cursor signed for the
   * query of `path` (its fingerprint taken from the first page's own next cursor).
   */
  deep?: { positionSql: { text: string; values: unknown[] } };
}

export interface RouteResult {
  id: string;
  label: string;
  targetMs: number;
  note?: string;
  api: TimingSummary;
  sql: TimingSummary;
}

/** The values the routes ask for, read from a sample of the data set (never fixed here). */
async function pickedValues(db: pg.Client): Promise<{
  startPath: string;
  steps: string[];
  rareSteps: string[];
  property: string;
  propertyOf: string;
  profile: string;
  profileEvents: number;
}> {
  const pair = await db.query<{ name: string; key: string }>(
    `SELECT name, key FROM (SELECT name, properties FROM events WHERE project_id = $1 AND properties <> '{}' LIMIT 10000) AS sample,
       jsonb_object_keys(properties) AS key GROUP BY name, key ORDER BY count(*) DESC, name, key LIMIT 1`,
    [BENCH_PROJECT],
  );
  // The identified profile with the most events: the single-profile routes' worst case.
  const busiest = await db.query<{ profile_id: string; event_count: string }>(
    `SELECT profile_id, event_count FROM profile_summaries WHERE project_id = $1 AND identified
       ORDER BY event_count DESC, profile_id LIMIT 1`,
    [BENCH_PROJECT],
  );
  // The funnel's steps: the three most frequent event names (the worst case: the first step is
  // most of the traffic), and the three least frequent (a product funnel of rarer events), from
  // the discovery catalogue's counts.
  const names = await db.query<{ name: string }>(
    `SELECT name FROM event_name_catalogue WHERE project_id = $1 ORDER BY events DESC, name LIMIT 3`,
    [BENCH_PROJECT],
  );
  const rareNames = await db.query<{ name: string }>(
    `SELECT name FROM (SELECT name, events FROM event_name_catalogue WHERE project_id = $1 ORDER BY events, name LIMIT 3)
       AS rare ORDER BY events DESC, name`,
    [BENCH_PROJECT],
  );
  // The user flow's start: the most viewed path of a sample.
  const page = await db.query<{ path: string }>(
    `SELECT path FROM (SELECT path FROM events WHERE project_id = $1 AND name = 'screen_view' AND path IS NOT NULL LIMIT 100000)
       AS sample GROUP BY path ORDER BY count(*) DESC, path LIMIT 1`,
    [BENCH_PROJECT],
  );
  return {
    startPath: page.rows[0]?.path ?? "/",
    steps: names.rows.map((row) => row.name),
    rareSteps: rareNames.rows.map((row) => row.name),
    property: pair.rows[0]?.key ?? "plan",
    propertyOf: pair.rows[0]?.name ?? "screen_view",
    profile: busiest.rows[0]?.profile_id ?? "",
    profileEvents: Number(busiest.rows[0]?.event_count ?? 0),
  };
}

export async function planRoutes(db: pg.Client, dataEnd: Date): Promise<RouteCase[]> {
  const { startPath, steps, rareSteps, property, propertyOf, profile, profileEvents } =
    await pickedValues(db);
  const profilePath = `/insights/${BENCH_PROJECT}/profiles/${encodeURIComponent(profile)}`;
  const ofProfile = "project_id = $1 AND profile_id = $2";
  const window = benchWindow(30, dataEnd);
  // 90 days ending with the data's last whole day: 13 or 14 Monday weeks once the route widens it.
  const weeks = benchWindow(90, dataEnd);
  const range = `startDate=${window.startDate}&endDate=${window.endDate}&timezone=UTC`;
  // Every day of the data set, through its last whole day and the day after.
  const lastDay = new Date(window.end.getTime() + 86_400_000).toISOString().slice(0, 10);
  const history = `startDate=2000-01-01&endDate=${lastDay}&timezone=UTC`;
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
      id: "events_deep",
      label: `/events (30 days, cursor page at depth ${DEPTH.toLocaleString("en-US")} or the last)`,
      targetMs: 30,
      path: `${project}/events?${range}`,
      deep: {
        positionSql: {
          text: `SELECT floor(extract(epoch FROM created_at) * 1000)::float8 AS t, id::text AS i FROM events
            WHERE ${inWindow} ORDER BY created_at DESC, id DESC OFFSET least($4, (SELECT count(*) - 20 FROM events WHERE ${inWindow})) LIMIT 1`,
          values: [...windowValues, DEPTH],
        },
      },
      note: "The plain SQL pages with OFFSET, as a client without keyset cursors does; the listing seeks its index to the cursor's position, so its cost does not grow with depth.",
      sql: {
        text: `SELECT * FROM events WHERE ${inWindow} ORDER BY created_at DESC, id DESC OFFSET $4 LIMIT 20`,
        values: [...windowValues, DEPTH],
      },
    },
    {
      id: "sessions_deep",
      label: `/sessions (all days, cursor page at depth ${DEPTH.toLocaleString("en-US")} or the last)`,
      targetMs: 30,
      path: `${project}/sessions?${history}`,
      deep: {
        positionSql: {
          text: `SELECT floor(extract(epoch FROM started_at) * 1000)::float8 AS t, id AS i FROM sessions
            WHERE project_id = $1 ORDER BY started_at DESC, id COLLATE "C" DESC
            OFFSET least($2, (SELECT count(*) - 20 FROM sessions WHERE project_id = $1)) LIMIT 1`,
          values: [BENCH_PROJECT, DEPTH],
        },
      },
      sql: {
        text: `SELECT session_id, min(created_at) AS started FROM events WHERE project_id = $1
          GROUP BY session_id ORDER BY started DESC, session_id DESC OFFSET $2 LIMIT 20`,
        values: [BENCH_PROJECT, DEPTH],
      },
    },
    {
      id: "profiles",
      label: "/profiles (whole history, first page)",
      targetMs: 30,
      path: `${project}/profiles`,
      sql: {
        text: `SELECT profile_id, min(created_at) AS first_seen, max(created_at) AS last_seen, bool_or(profile_id <> device_id)
          FROM events WHERE project_id = $1 GROUP BY profile_id ORDER BY first_seen DESC, profile_id DESC LIMIT 20`,
        values: [BENCH_PROJECT],
      },
      note: "The plain SQL groups every event by visitor; the listing reads the profile summaries by first seen.",
    },
    {
      id: "profiles_deep",
      label: `/profiles (whole history, cursor page at depth ${DEPTH.toLocaleString("en-US")} or the last)`,
      targetMs: 30,
      path: `${project}/profiles`,
      deep: {
        positionSql: {
          text: `SELECT floor(extract(epoch FROM first_seen_at) * 1000)::float8 AS t, profile_id AS i FROM profile_summaries
            WHERE project_id = $1 ORDER BY first_seen_at DESC, profile_id COLLATE "C" DESC
            OFFSET least($2, (SELECT count(*) - 20 FROM profile_summaries WHERE project_id = $1)) LIMIT 1`,
          values: [BENCH_PROJECT, DEPTH],
        },
      },
      sql: {
        text: `SELECT profile_id, min(created_at) AS first_seen FROM events WHERE project_id = $1
          GROUP BY profile_id ORDER BY first_seen DESC, profile_id DESC OFFSET $2 LIMIT 20`,
        values: [BENCH_PROJECT, DEPTH],
      },
    },
    {
      id: "profiles_window",
      label: "/profiles (30 days, identified, first page)",
      targetMs: 30,
      path: `${project}/profiles?${range}&identified=true`,
      sql: {
        text: `SELECT profile_id, min(created_at) AS first_seen FROM events WHERE ${inWindow} AND profile_id <> device_id
          GROUP BY profile_id ORDER BY first_seen DESC LIMIT 20`,
        values: windowValues,
      },
    },
    {
      id: "profile",
      label: `/profiles/{id} (the identified profile with the most events: ${profileEvents.toLocaleString("en-US")})`,
      targetMs: 30,
      path: profilePath,
      sql: {
        text: `SELECT min(created_at), max(created_at), (SELECT array_agg(id) FROM (SELECT id FROM events WHERE ${ofProfile}
          ORDER BY created_at DESC LIMIT 20) AS recent) FROM events WHERE ${ofProfile}`,
        values: [BENCH_PROJECT, profile],
      },
    },
    {
      id: "profile_sessions",
      label: "/profiles/{id}/sessions (same profile)",
      targetMs: 30,
      path: `${profilePath}/sessions`,
      sql: {
        text: `SELECT session_id, min(created_at) AS started FROM events WHERE ${ofProfile}
          GROUP BY session_id ORDER BY started DESC LIMIT 20`,
        values: [BENCH_PROJECT, profile],
      },
    },
    {
      id: "profile_metrics",
      label: "/profiles/{id}/metrics (same profile)",
      targetMs: 30,
      path: `${profilePath}/metrics`,
      sql: {
        text: `SELECT count(*), count(*) FILTER (WHERE name = 'screen_view'), count(DISTINCT created_at::date), sum(revenue),
          count(DISTINCT session_id) FROM events WHERE ${ofProfile}`,
        values: [BENCH_PROJECT, profile],
      },
    },
    ...(
      [
        ["session_id", steps, ""],
        ["profile_id", steps, ""],
        ["profile_id", rareSteps, "_rare"],
      ] as const
    ).map(([groupBy, names, suffix]) => ({
      id: `funnel_${groupBy}${suffix}`,
      label: `/funnel (30 days, ${names.length} steps ${names.join(" → ")}, 24 h, by ${groupBy})`,
      targetMs: 300,
      path: `${project}/funnel?${range}&${names.map((step) => `steps=${encodeURIComponent(step)}`).join("&")}&groupBy=${groupBy}`,
      note: `The plain SQL is the self-join a client would write (each later step joined to the earlier ones within 24 hours, distinct groups counted).${
        suffix
          ? ""
          : " The first step is the most frequent event: every exact funnel reads most of the window's events."
      }`,
      sql: {
        text: `SELECT count(DISTINCT a.${groupBy}), count(DISTINCT b.${groupBy}), count(DISTINCT c.${groupBy})
          FROM events a
          LEFT JOIN events b ON b.project_id = a.project_id AND b.${groupBy} = a.${groupBy} AND b.name = $5
            AND b.created_at > a.created_at AND b.created_at <= a.created_at + interval '24 hours' AND b.created_at < $3
          LEFT JOIN events c ON c.project_id = a.project_id AND c.${groupBy} = a.${groupBy} AND c.name = $6
            AND c.created_at > b.created_at AND c.created_at <= a.created_at + interval '24 hours' AND c.created_at < $3
          WHERE a.project_id = $1 AND a.created_at >= $2 AND a.created_at < $3 AND a.name = $4`,
        values: [...windowValues, ...names],
      },
    })),
    {
      id: "active_users",
      label: "/active_users?days=30 (30 days)",
      targetMs: 100,
      path: `${project}/active_users?${range}&days=30`,
      note: "Reads `active_user_days` (per day, users by the days since their previous active day, kept by the refresh): a few thousand rows whatever the traffic. The plain SQL counts the distinct visitors of each point's 30 days.",
      sql: {
        text: `SELECT d::date, (SELECT count(DISTINCT profile_id) FROM events WHERE project_id = $1
            AND created_at >= d - interval '29 days' AND created_at < d + interval '1 day')
          FROM generate_series($2::timestamptz, $3::timestamptz - interval '1 day', interval '1 day') AS d`,
        values: windowValues,
      },
    },
    {
      id: "retention_cohort",
      label: "/retention/cohort (90 days, widened to whole weeks)",
      targetMs: 200,
      path: `${project}/retention/cohort?startDate=${weeks.startDate}&endDate=${weeks.endDate}&timezone=UTC`,
      note: "Reads `retention_weeks` (identified users per cohort, active week and next active week, kept by the refresh). The plain SQL groups the identified events of the whole history by visitor and week (a cohort is the week of a user's first event ever).",
      sql: {
        text: `WITH w AS (SELECT DISTINCT profile_id, date_trunc('week', created_at) AS week FROM events
            WHERE project_id = $1 AND profile_id <> device_id AND created_at < $3),
          f AS (SELECT profile_id, min(week) AS cohort FROM w GROUP BY 1)
          SELECT f.cohort, w.week, count(*) FROM f JOIN w USING (profile_id) WHERE f.cohort >= $2 GROUP BY 1, 2`,
        values: [BENCH_PROJECT, weeks.start, weeks.end],
      },
    },
    {
      id: "user_flow",
      label: `/user_flow (30 days, paths, after ${startPath}, 5 steps)`,
      targetMs: 500,
      path: `${project}/user_flow?${range}&paths=true&steps=5&startEvent=${encodeURIComponent(startPath)}`,
      note: "Reads the window's events and labels them per session in Postgres; the plain SQL builds the same per-session label arrays.",
      sql: {
        text: `SELECT count(*) FROM (SELECT session_id, array_agg(CASE WHEN name = 'screen_view' THEN coalesce(path, name) ELSE name END
          ORDER BY created_at, id) AS labels FROM events WHERE ${inWindow} GROUP BY session_id) AS paths
          WHERE $4 = ANY(labels)`,
        values: [...windowValues, startPath],
      },
    },
    {
      id: "engagement",
      label: "/engagement (whole history)",
      targetMs: 100,
      path: `${project}/engagement?timezone=UTC`,
      note: "The plain SQL groups every identified event by visitor; the route sums the users of each day that was their last identified one (`active_user_days`).",
      sql: {
        text: `SELECT days, count(*) FROM (SELECT current_date - max(created_at)::date AS days FROM events
          WHERE project_id = $1 AND profile_id <> device_id GROUP BY profile_id) AS last_activity GROUP BY 1 ORDER BY 1`,
        values: [BENCH_PROJECT],
      },
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
      note: "Reads the entry/exit rollups (per hour and project day, kept by the refresh) of the window's whole days.",
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
      const path = route.deep
        ? await deepPagePath(client, db, route.path, route.deep.positionSql)
        : route.path;
      const api = summarize(
        await measure(options.runs, options.budgetSeconds * 1000, async () => {
          await apiGetOk(client, path, true);
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

/**
 * The path of a keyset page deep in a listing: the first page's next cursor names the query's
 * fingerprint; the same fingerprint with the position SQL reads is signed as the server would.
 */
async function deepPagePath(
  client: ApiClient,
  db: pg.Client,
  path: string,
  positionSql: { text: string; values: unknown[] },
): Promise<string> {
  const first = await apiGetOk(client, path, true);
  const next = first.headers.get("x-next-cursor");
  if (!next) throw new Error(`${path}: the first page has no next cursor`);
  const payload = JSON.parse(Buffer.from(next.split(".")[0] ?? "", "base64url").toString("utf8")) as {
    q: string;
  };
  const position = (await db.query<{ t: number; i: string }>(positionSql.text, positionSql.values)).rows[0];
  if (!position) throw new Error(`${path}: no row at the deep position`);
  const cursor = await encodeListingCursor(
    client.cursorSecret,
    { createdAt: position.t, id: position.i },
    payload.q,
  );
  return `${path}${path.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`;
}

/** The report's section for these routes. */
