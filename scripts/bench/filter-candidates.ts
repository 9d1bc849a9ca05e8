import type pg from "pg";
import { BENCH_PROJECT, type BenchFilter, type BenchWindow } from "./cases";

/** A filter the picker may choose (filters.ts), with the sessions of the window it keeps. */
export interface Candidate {
  filters: BenchFilter[];
  sessions: number;
  /** Lower sorts first among equally close candidates (list order, then value). */
  order: number;
  tieBreak: string;
}

/** Text candidates are the prefixes of values, up to this long. */
export const TEXT_PREFIX_MAX = 16;
/** A property key's prefixes come from its commonest values, at most this many. */
const PROPERTY_TEXT_VALUES_MAX = 50;

/**
 * Each distinct (session, top-level key, scalar value as text) of the events of the window
 * ($1 project, $2 start, $3 end). Keys the API would read as a path (dots) or an array position
 * are left out.
 */
const WINDOW_LEAVES = `SELECT DISTINCT e.session_id, p.key, p.value #>> '{}' AS value
  FROM events e, jsonb_each(e.properties) AS p(key, value)
 WHERE e.project_id = $1 AND e.created_at >= $2 AND e.created_at < $3 AND e.properties <> '{}'::jsonb
   AND jsonb_typeof(p.value) IN ('string', 'number', 'boolean') AND p.key ~ '^[A-Za-z_][A-Za-z0-9_]*$'`;

/**
 * Sessions with an event whose top-level property has each scalar value, as a dashboard filters on
 * a property it tracks (`properties.plan is "free"`): the exact path, through the sessions' property values.
 */
export async function propertyCounts(db: pg.Client, window: BenchWindow): Promise<Candidate[]> {
  const result = await db.query<{ key: string; value: string; n: number }>(
    `SELECT key, value, count(*)::int AS n FROM (${WINDOW_LEAVES}) AS leaves GROUP BY 1, 2`,
    [BENCH_PROJECT, window.start, window.end],
  );
  return result.rows.map((r) => ({
    filters: [{ name: `properties.${r.key}`, operator: "is", value: [r.value] }],
    sessions: r.n,
    order: 0,
    tieBreak: `${r.key}\u0000${r.value}`,
  }));
}

/**
 * Sessions with an event whose top-level property contains each prefix (2 to 16 characters) of one
 * of its key's commonest values, as a user searches a property (`properties.button contains "bo"`):
 * the other operators' exact path. Counted exactly (a session may hold several values of a key),
 * over the keys' values in the window; a prefix that matches two values or more wins over one that
 * matches a single value, as for the text operator on a dimension.
 */
export async function propertyTextCounts(
  db: pg.Client,
  window: BenchWindow,
): Promise<{ multi: Candidate[]; single: Candidate[] }> {
  const result = await db.query<{ key: string; prefix: string; n: number; matched: number }>(
    `WITH leaves AS (${WINDOW_LEAVES}),
     ranked AS (
       SELECT key, value, row_number() OVER (PARTITION BY key ORDER BY count(*) DESC, value) AS rank
         FROM leaves GROUP BY key, value),
     prefixes AS (
       SELECT DISTINCT r.key, left(r.value, len) AS prefix
         FROM ranked r, generate_series(2, least(length(r.value), $4::int)) AS len
        WHERE r.rank <= $5)
     SELECT x.key, x.prefix, count(DISTINCT l.session_id)::int AS n, count(DISTINCT l.value)::int AS matched
       FROM prefixes x JOIN leaves l ON l.key = x.key AND strpos(l.value, x.prefix) > 0
      GROUP BY 1, 2`,
    [BENCH_PROJECT, window.start, window.end, TEXT_PREFIX_MAX, PROPERTY_TEXT_VALUES_MAX],
  );
  const multi: Candidate[] = [];
  const single: Candidate[] = [];
  for (const r of result.rows) {
    (r.matched >= 2 ? multi : single).push({
      filters: [{ name: `properties.${r.key}`, operator: "contains", value: [r.prefix] }],
      sessions: r.n,
      // Shorter prefixes first among equals: they are the more typical search.
      order: r.prefix.length,
      tieBreak: `${r.key}\u0000${r.prefix}`,
    });
  }
  return { multi, single };
}

/**
 * The event name that carries a top-level property value most often in the window (ties: by name),
 * the series of a chart filtered on it: a chart of an event that never carries the key counts
 * nothing. Undefined when no event carries it.
 */
export async function propertyChartEvent(
  db: pg.Client,
  window: BenchWindow,
  filter: { name: string; value: readonly string[] },
): Promise<string | undefined> {
  const key = filter.name.slice("properties.".length);
  const result = await db.query<{ name: string }>(
    `SELECT name FROM events WHERE project_id = $1 AND created_at >= $2 AND created_at < $3
       AND properties ->> $4 = $5 GROUP BY name ORDER BY count(*) DESC, name LIMIT 1`,
    [BENCH_PROJECT, window.start, window.end, key, filter.value[0]],
  );
  return result.rows[0]?.name;
}
