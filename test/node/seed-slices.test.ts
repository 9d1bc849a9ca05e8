import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { createScratchDatabase, type ScratchDatabase } from "../../scripts/db/scratch-database";
import { seedDatabase } from "../../scripts/seed/loader";

/**
 * A load in slices (the benchmark's data sets past 10 million events, to bound the disk a first
 * build takes) ends with the same rows in every table a project has as a load in one piece of the
 * same traffic: the later slices are folded in by the incremental refresh, which must agree with
 * the whole build to the last row (`ingest_xid` aside, each slice's own transaction id). Each load
 * goes into a database of its own, since the same seed and `now` give the same event ids.
 */

const traffic = { events: 4_000, days: 3, seed: 23, now: new Date("2026-03-09T16:40:00.000Z"), reset: true };

/** The accounts' tables, which a seed fills with its fixtures alone. */
const ACCOUNT_TABLES = new Set(["clients", "projects"]);

let whole: ScratchDatabase;
let sliced: ScratchDatabase;

beforeAll(async () => {
  [whole, sliced] = await Promise.all([
    createScratchDatabase("seed_whole"),
    createScratchDatabase("seed_sliced"),
  ]);
  await Promise.all([migrateDatabase(whole.url), migrateDatabase(sliced.url)]);
});

afterAll(async () => {
  await Promise.all([whole?.drop(), sliced?.drop()]);
});

async function query<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The tables with a project_id column but the accounts'. */
async function projectTables(url: string): Promise<string[]> {
  const rows = await query<{ table: string }>(
    url,
    `SELECT c.table_name AS table FROM information_schema.columns c
       JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = current_schema() AND c.column_name = 'project_id' AND t.table_type = 'BASE TABLE'
      ORDER BY 1`,
  );
  return rows.map((row) => row.table).filter((table) => !ACCOUNT_TABLES.has(table));
}

/**
 * The strings over a day's events number them in the order they were folded in, which differs
 * between slices and one piece where a session of one slice runs past the start of the next:
 * they are compared by what they count. Which event of a member's day is its representative (the
 * lowest-numbered) follows that order too, and so do the events that differ from it (`deviant:`
 * strings): the representatives are compared by whose they are.
 */
const NUMBERED_TABLES: Record<string, string> = {
  event_day_bits: `SELECT jsonb_build_object('project_id', project_id, 'day', day, 'dimension', dimension,
      'name', name, 'events', sum(bit_count(events)))::text AS row
    FROM event_day_bits WHERE dimension NOT LIKE 'deviant:%' GROUP BY project_id, day, dimension, name ORDER BY 1`,
  event_day_firsts: `SELECT jsonb_build_object('project_id', project_id, 'segment', segment, 'day', day,
      'member', member)::text AS row FROM event_day_firsts ORDER BY 1`,
  // Each numbered event's representative: per segment and day, how many events and how many of
  // them their own representative.
  event_day_first_pages: `SELECT jsonb_build_object('project_id', project_id, 'segment', segment, 'day', day,
      'entries', count(*), 'representatives', count(*) FILTER (WHERE f.first = page * member_page_events() + f.i - 1))::text AS row
    FROM event_day_first_pages p, unnest(p.firsts) WITH ORDINALITY AS f(first, i) GROUP BY project_id, segment, day ORDER BY 1`,
  // Whose each numbered event is: per segment and day, its hashes as a multiset.
  event_day_members: `SELECT jsonb_build_object('project_id', project_id, 'segment', segment, 'day', day,
      'entries', count(*), 'members', md5(string_agg(member::text, ',' ORDER BY member)))::text AS row
    FROM event_day_members m, unnest(m.members) AS member GROUP BY project_id, segment, day ORDER BY 1`,
};

/** A table's rows as sorted JSON texts, without the loading transaction's id. */
async function rowsOf(url: string, table: string): Promise<string[]> {
  const rows = await query<{ row: string }>(
    url,
    NUMBERED_TABLES[table] ?? `SELECT (to_jsonb(t) - 'ingest_xid')::text AS row FROM "${table}" t ORDER BY 1`,
  );
  return rows.map((r) => r.row);
}

describe("the demo data loaded in slices", () => {
  it("holds the same rows in every table of a project as the data loaded in one piece", async () => {
    await seedDatabase(whole.url, traffic);
    await seedDatabase(sliced.url, { ...traffic, slices: 3 });

    const loads = `SELECT count(DISTINCT ingest_xid)::int AS loads FROM events`;
    expect(await query(whole.url, loads)).toEqual([{ loads: 1 }]);
    expect(await query(sliced.url, loads)).toEqual([{ loads: 3 }]);

    const tables = await projectTables(whole.url);
    expect(await projectTables(sliced.url)).toEqual(tables);
    // events, sessions and the derived tables are among them.
    expect(tables).toEqual(
      expect.arrayContaining([
        "events",
        "sessions",
        "session_day_bits",
        "event_pair_rollups",
        "event_day_bits",
        "event_day_members",
      ]),
    );
    const differing: string[] = [];
    let rows = 0;
    for (const table of tables) {
      const [a, b] = await Promise.all([rowsOf(whole.url, table), rowsOf(sliced.url, table)]);
      rows += a.length;
      if (JSON.stringify(a) !== JSON.stringify(b))
        differing.push(`${table} (${a.length} rows against ${b.length})`);
    }
    expect(differing).toEqual([]);
    expect(rows).toBeGreaterThan(traffic.events);
  });
});
