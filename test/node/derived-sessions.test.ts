import { asc, eq, sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { migrateDatabase } from "../../scripts/db/apply-migrations";
import { createScratchDatabase } from "../../scripts/db/scratch-database";
import { sessions } from "../../src/db/schema";
import { refreshDerived } from "../../src/queries/derived";
import { type EventInput, insertEvents, uniqueId } from "../support/factories";
import { rawConnection, testDatabase } from "../support/node/database";
import { refreshUntilFolded } from "../support/watermarks";

const database = testDatabase();
afterAll(() => database.close());

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

/** A small but varied set of sessions: bounces, custom events, revenue, entry/exit pages. */
function sampleEvents(projectId: string): EventInput[] {
  const rows: EventInput[] = [];
  for (let s = 0; s < 12; s++) {
    const sessionId = `s${s}`;
    const profileId = s % 3 === 0 ? `user-${s % 5}` : `d${s}`;
    const base = s * 7;
    rows.push({
      projectId,
      sessionId,
      profileId,
      deviceId: `d${s}`,
      createdAt: at(base),
      path: `/landing-${s % 4}`,
      origin: "https://example.com",
      referrer: s % 2 ? "https://google.com" : null,
      referrerName: s % 2 ? "Google" : null,
      referrerType: s % 2 ? "search" : null,
      utmCampaign: s % 4 === 1 ? "spring" : null,
      country: ["NO", "SE", "DE"][s % 3],
      browser: s % 2 ? "Chrome" : "Firefox",
    });
    if (s % 3 !== 2) {
      rows.push({
        projectId,
        sessionId,
        profileId,
        deviceId: `d${s}`,
        createdAt: at(base + 1),
        path: "/pricing",
      });
      // Later events carry other attributes: the session must keep its first event's.
      rows.push({
        projectId,
        sessionId,
        profileId,
        deviceId: `d${s}`,
        createdAt: at(base + 3),
        name: "purchase",
        path: null,
        revenue: 1_000 + s,
        country: "US",
        browser: "Safari",
      });
      rows.push({
        projectId,
        sessionId,
        profileId,
        deviceId: `d${s}`,
        createdAt: at(base + 5),
        path: `/thanks-${s}`,
      });
    }
  }
  return rows;
}

async function sessionRows(projectId: string) {
  const rows = await database.db
    .select()
    .from(sessions)
    .where(eq(sessions.projectId, projectId))
    .orderBy(asc(sessions.id));
  return rows.map(({ projectId: _ignored, ...rest }) => rest);
}

/** A project's session pages and names, every column but the project. */
async function pagesAndNames(projectId: string) {
  const pages = await database.db.execute(
    sql`select session_id, started_at, is_bounce, origin, path, title, views, duration_ms, timed_views
        from session_pages where project_id = ${projectId} order by session_id, origin, path`,
  );
  const names = await database.db.execute(
    sql`select session_id, started_at, name from session_names where project_id = ${projectId} order by session_id, name`,
  );
  return { pages: pages.rows, names: names.rows };
}

describe("refresh_derived()", () => {
  it("derives sessions by the contract's definitions", async () => {
    const projectId = uniqueId("sessions");
    await insertEvents(database.db, sampleEvents(projectId));
    const rows = await sessionRows(projectId);
    expect(rows).toHaveLength(12);
    const s1 = rows.find((row) => row.id === "s1");
    expect(s1).toEqual({
      id: "s1",
      profileId: "d1",
      deviceId: "d1",
      startedAt: at(7),
      endedAt: at(12),
      durationMs: 5 * 60_000,
      eventCount: 4,
      screenViewCount: 3,
      isBounce: false,
      revenue: 1_001,
      entryPath: "/landing-1",
      entryOrigin: "https://example.com",
      exitPath: "/thanks-1",
      exitOrigin: null,
      referrer: "https://google.com",
      referrerName: "Google",
      referrerType: "search",
      utmSource: null,
      utmMedium: null,
      utmCampaign: "spring",
      utmTerm: null,
      utmContent: null,
      country: "SE",
      region: null,
      city: null,
      device: null,
      brand: null,
      model: null,
      browser: "Chrome",
      browserVersion: null,
      os: null,
      osVersion: null,
    });
    const s2 = rows.find((row) => row.id === "s2");
    expect(s2).toMatchObject({
      eventCount: 1,
      screenViewCount: 1,
      isBounce: true,
      durationMs: 0,
      revenue: 0,
    });
    expect(s2?.exitPath).toBe("/landing-2");
  });

  it("gives the same sessions whether events arrive in one batch or in many small ones, in any order", async () => {
    const together = uniqueId("one-batch");
    const trickled = uniqueId("trickled");
    await insertEvents(database.db, sampleEvents(together));

    // Same events for another project, shuffled deterministically and refreshed after every 3.
    const shuffled = sampleEvents(trickled)
      .map((row, index) => ({ row, key: (index * 7919) % 31 }))
      .sort((a, b) => a.key - b.key)
      .map(({ row }) => row);
    for (let i = 0; i < shuffled.length; i += 3) await insertEvents(database.db, shuffled.slice(i, i + 3));

    expect(await sessionRows(trickled)).toEqual(await sessionRows(together));
    // Their pages and names too: a later run leaves a session's unchanged rows in place and
    // replaces the others, so nothing is lost or left twice.
    const togetherRows = await pagesAndNames(together);
    expect(await pagesAndNames(trickled)).toEqual(togetherRows);
    const events = sampleEvents(together).map((row) => ({ path: "/", name: "screen_view", ...row }));
    const distinct = (keys: string[]) => new Set(keys).size;
    expect(togetherRows.pages).toHaveLength(
      distinct(events.map((e) => `${e.sessionId} ${e.origin ?? null} ${e.path}`)),
    );
    expect(togetherRows.names).toHaveLength(distinct(events.map((e) => `${e.sessionId} ${e.name}`)));
  });

  it("is idempotent: a run with nothing new changes nothing", async () => {
    const projectId = uniqueId("idempotent");
    await insertEvents(database.db, sampleEvents(projectId));
    const before = await sessionRows(projectId);
    await refreshDerived(database.db);
    await database.db.execute(sql`select refresh_derived()`);
    expect(await sessionRows(projectId)).toEqual(before);
  });

  // Needs two concurrent sessions, which the embedded database (one session) cannot give.
  it.skipIf(inject("embeddedDatabase"))(
    "does not miss events of a transaction that commits after a later one",
    async () => {
      const projectId = uniqueId("out-of-order");
      const slow = await rawConnection();
      try {
        await slow.query("BEGIN");
        await slow.query(
          `INSERT INTO events (project_id, name, device_id, profile_id, session_id, created_at)
         VALUES ($1, 'screen_view', 'd-slow', 'd-slow', 'slow', $2)`,
          [projectId, at(0)],
        );
        // A later transaction commits first, and a run happens while the slow one is open (one
        // run: insertEvents would wait for a watermark the open transaction holds back).
        await insertEvents(database.db, [{ projectId, sessionId: "fast", createdAt: at(1) }], {
          refresh: false,
        });
        await refreshDerived(database.db);
        expect((await sessionRows(projectId)).map((row) => row.id)).toEqual(["fast"]);

        await slow.query("COMMIT");
        await refreshDerived(database.db);
        expect((await sessionRows(projectId)).map((row) => row.id)).toEqual(["fast", "slow"]);
      } finally {
        await slow.end();
      }
    },
  );

  it("updates a session that receives more events later", async () => {
    const projectId = uniqueId("growing");
    await insertEvents(database.db, [{ projectId, sessionId: "g", createdAt: at(10), path: "/b" }]);
    expect((await sessionRows(projectId))[0]).toMatchObject({ isBounce: true, entryPath: "/b" });
    // A late event that happened earlier becomes the session's first event.
    await insertEvents(database.db, [
      { projectId, sessionId: "g", createdAt: at(2), path: "/a", country: "NO" },
      { projectId, sessionId: "g", createdAt: at(12), name: "signup", path: null },
    ]);
    expect((await sessionRows(projectId))[0]).toMatchObject({
      startedAt: at(2),
      endedAt: at(12),
      durationMs: 10 * 60_000,
      eventCount: 3,
      screenViewCount: 2,
      isBounce: false,
      entryPath: "/a",
      exitPath: "/b",
      country: "NO",
    });
  });

  it("writes new sessions in the order they started, whatever their ids", async () => {
    // A database of its own: in the shared one, free space left by other tests' updates could
    // take some of the rows, and the physical order would say nothing.
    const scratch = await createScratchDatabase("api_full_build");
    const client = new pg.Client({ connectionString: scratch.url });
    try {
      await migrateDatabase(scratch.url);
      await client.connect();
      // 300 sessions a minute apart, three events each; md5 ids sort in no relation to their start.
      await client.query(
        `INSERT INTO events (project_id, name, device_id, profile_id, session_id, created_at, path)
         SELECT 'ordered', 'screen_view', 'd' || i, 'd' || i, md5(i::text),
                $1::timestamptz + i * interval '1 minute' + k * interval '10 seconds', '/'
           FROM generate_series(1, 300) i, generate_series(0, 2) k`,
        [at(0)],
      );
      await refreshUntilFolded((text) => client.query(text), ["sessions", "rollups"]);
      const stored = await client.query<{ id: string; started_at: Date }>(
        "SELECT id, started_at FROM sessions ORDER BY ctid",
      );
      const starts = stored.rows.map((row) => row.started_at.getTime());
      expect(starts).toHaveLength(300);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      // The ids themselves are out of order, so the table is not merely in id order.
      const ids = stored.rows.map((row) => row.id);
      expect(ids).not.toEqual([...ids].sort());
    } finally {
      await client.end().catch(() => {});
      await scratch.drop();
    }
  });
  it("leaves no temporary table behind when it ends, on a first build and on a later run", async () => {
    // Postgres unlinks a dropped table's files only at commit; the routines empty theirs in place
    // first, so a first build holds no temporary copy until its end. Read from inside each run's
    // transaction, before the commit that would drop them anyway.
    const scratch = await createScratchDatabase("api_temporary_tables");
    const client = new pg.Client({ connectionString: scratch.url });
    const leftBehind = async () => {
      await client.query("BEGIN");
      await client.query("SELECT refresh_derived()");
      const tables = await client.query<{ name: string }>(
        "SELECT relname AS name FROM pg_class WHERE relnamespace = pg_my_temp_schema() AND relkind = 'r' ORDER BY 1",
      );
      await client.query("COMMIT");
      return tables.rows.map((row) => row.name);
    };
    try {
      await migrateDatabase(scratch.url);
      await client.connect();
      // Two days of sessions with pages, a custom event with properties, and a returning visitor.
      const insert = (first: number, last: number, path: string) =>
        client.query(
          `INSERT INTO events (project_id, name, device_id, profile_id, session_id, created_at, path, country, properties)
           SELECT 'temporary', CASE k WHEN 1 THEN 'signup' ELSE 'screen_view' END, 'd' || i % 40, 'd' || i % 40,
                  md5(i::text), $1::timestamptz + i * interval '9 minutes' + k * interval '20 seconds',
                  $2 || i % 7, (ARRAY['NO', 'SE', 'DE'])[1 + i % 3], jsonb_build_object('plan', 'p' || i % 4)
             FROM generate_series($3::int, $4::int) i, generate_series(0, 2) k`,
          [at(0), path, first, last],
        );
      await insert(1, 300, "/first-");
      expect(await leftBehind()).toEqual([]);
      // Later events: some sessions grow, others are new.
      await insert(280, 330, "/later-");
      expect(await leftBehind()).toEqual([]);
      // Both runs derived what they were given.
      const sessions = await client.query<{ count: string }>("SELECT count(*) FROM sessions");
      expect(Number(sessions.rows[0]?.count)).toBe(330);
    } finally {
      await client.end().catch(() => {});
      await scratch.drop();
    }
  });
  it("rebuilds a new project from its own rows: the first run after it is created reads no other project's", async () => {
    // A new project has no recorded timezone, so its first run builds its days whole. Joined to the
    // projects alone, those statements read every project's sessions, pages and names (a 1M-event
    // database: 28 s instead of 0.2 s, with no new event). Counted inside the run's transaction.
    const scratch = await createScratchDatabase("api_new_project");
    const client = new pg.Client({ connectionString: scratch.url });
    const rowsRead = async () => {
      // The counts of earlier transactions still pending in this backend would show in those of
      // this one: they are flushed as the backend waits for the BEGIN.
      await client.query("SELECT pg_stat_force_next_flush()");
      await client.query("BEGIN");
      await client.query("SELECT refresh_derived()");
      const read = await client.query<{ relname: string; rows: string }>(
        `SELECT relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS rows
           FROM pg_stat_xact_user_tables WHERE relname IN ('sessions', 'session_pages', 'session_names') ORDER BY 1`,
      );
      await client.query("COMMIT");
      return Object.fromEntries(read.rows.map((row) => [row.relname, Number(row.rows)]));
    };
    try {
      await migrateDatabase(scratch.url);
      await client.connect();
      await client.query("INSERT INTO organizations (id, name) VALUES ('org', 'org')");
      await client.query(
        "INSERT INTO projects (id, organization_id, name, timezone) VALUES ('established', 'org', 'established', 'Europe/Oslo')",
      );
      // 3,000 sessions of three events, each on one of seven paths, with two event names.
      await client.query(
        `INSERT INTO events (project_id, name, device_id, profile_id, session_id, created_at, path, country)
         SELECT 'established', CASE k WHEN 1 THEN 'signup' ELSE 'screen_view' END, 'd' || i % 400, 'd' || i % 400,
                md5(i::text), $1::timestamptz + i * interval '5 minutes' + k * interval '20 seconds',
                '/p' || i % 7, (ARRAY['NO', 'SE', 'DE'])[1 + i % 3]
           FROM generate_series(1, 3000) i, generate_series(0, 2) k`,
        [at(0)],
      );
      await refreshUntilFolded((text) => client.query(text), ["sessions", "rollups"]);
      const established = await client.query<{ pages: string; names: string }>(
        "SELECT (SELECT count(*) FROM session_pages)::text AS pages, (SELECT count(*) FROM session_names)::text AS names",
      );
      expect(Number(established.rows[0]?.pages)).toBe(3000);
      expect(Number(established.rows[0]?.names)).toBe(3000 * 2);
      await client.query("ANALYZE");
      // A run with nothing new, then the same with a new project: it reads what that one reads.
      // Compared only between two idle runs that read alike: a transaction held open elsewhere on
      // the server (another test's) holds the watermark back, and a run then reads some sessions
      // again. Each attempt creates a project of its own, since only its first run rebuilds it.
      let compared = false;
      for (let attempt = 0; attempt < 10 && !compared; attempt++) {
        const idle = await rowsRead();
        const newcomer = `newcomer_${attempt}`;
        await client.query(
          "INSERT INTO projects (id, organization_id, name, timezone) VALUES ($1, 'org', 'new', 'Asia/Tokyo')",
          [newcomer],
        );
        const withNewProject = await rowsRead();
        if (JSON.stringify(await rowsRead()) !== JSON.stringify(idle)) continue;
        expect(withNewProject).toEqual(idle);
        // And its timezone is recorded: the next run rebuilds nothing.
        const zones = await client.query("SELECT timezone FROM rollup_timezones WHERE project_id = $1", [
          newcomer,
        ]);
        expect(zones.rows).toEqual([{ timezone: "Asia/Tokyo" }]);
        compared = true;
      }
      expect(compared).toBe(true);
    } finally {
      await client.end().catch(() => {});
      await scratch.drop();
    }
  });
  it("writes each day's bit strings together, in the order of their values, on a build and on a later run", async () => {
    // In the order a hash grouping gave them, a page's slices of a day lay scattered over as many
    // heap pages as it has slices, and reads of a window fetched twice the pages they need.
    const scratch = await createScratchDatabase("api_string_order");
    const client = new pg.Client({ connectionString: scratch.url });
    const stringTables = {
      session_day_bits: "dimension, name, prefix",
      session_day_slices: "measure, slice",
      page_day_bits: "origin, path, title",
      page_day_slices: "origin, path, measure, slice",
      visitor_day_bits: "dimension, name, chunk",
    };
    // Per table: whether the rows lie in (project, day, values) order, and whether each project
    // day's rows lie together and in that order.
    const layout = async () => {
      const result: Record<string, { ordered: boolean; daysTogether: boolean; rows: number }> = {};
      for (const [table, keys] of Object.entries(stringTables)) {
        const { rows } = await client.query<{ ordered: boolean; together: boolean; rows: string }>(
          `WITH placed AS (
             SELECT project_id, day, row_number() OVER (ORDER BY ctid) AS place,
                    row_number() OVER (ORDER BY project_id, day, ${keys}) AS sorted,
                    row_number() OVER (PARTITION BY project_id, day ORDER BY ctid) AS day_place,
                    row_number() OVER (PARTITION BY project_id, day ORDER BY ${keys}) AS day_sorted
               FROM ${table})
           SELECT bool_and(place = sorted) AS ordered,
                  bool_and(day_place = day_sorted) AND (SELECT bool_and(max - min + 1 = count) FROM (
                    SELECT max(place) AS max, min(place) AS min, count(*) AS count FROM placed GROUP BY project_id, day
                  ) AS runs) AS together,
                  count(*)::text AS rows
             FROM placed`,
        );
        const row = rows[0];
        result[table] = {
          ordered: row?.ordered ?? false,
          daysTogether: row?.together ?? false,
          rows: Number(row?.rows),
        };
      }
      return result;
    };
    try {
      await migrateDatabase(scratch.url);
      await client.connect();
      // The strings are built for the projects that exist (their days are of the project's zone).
      await client.query("INSERT INTO organizations (id, name) VALUES ('o', 'o')");
      await client.query(
        "INSERT INTO projects (id, organization_id, name) VALUES ('p0', 'o', 'p0'), ('p1', 'o', 'p1')",
      );
      // Three days, sessions on many pages with titles, from several countries and visitors.
      const insert = (first: number, last: number) =>
        client.query(
          `INSERT INTO events (project_id, name, device_id, profile_id, session_id, created_at, path, title,
                               country, duration)
           SELECT 'p' || i % 2, 'screen_view', 'd' || i % 50, 'd' || i % 50, md5(i::text),
                  $1::timestamptz + i * interval '7 minutes' + k * interval '30 seconds', '/page-' || (i * 7 + k) % 23,
                  'Title ' || (i + k) % 3, (ARRAY['NO', 'SE', 'DE', 'US'])[1 + i % 4], (i * 37 + k) % 900
             FROM generate_series($2::int, $3::int) i, generate_series(0, 3) k`,
          [at(0), first, last],
        );
      await insert(1, 600);
      await refreshUntilFolded((text) => client.query(text), ["sessions", "rollups"]);
      const built = await layout();
      for (const [table, { ordered, rows }] of Object.entries(built)) {
        expect({ table, ordered, many: rows > 50 }).toEqual({ table, ordered: true, many: true });
      }
      // A later run rewrites the days it touches (new sessions of the last day, a late one of the first).
      await insert(590, 640);
      await client.query(
        `INSERT INTO events (project_id, name, device_id, profile_id, session_id, created_at, path, country)
         VALUES ('p0', 'screen_view', 'late', 'late', 'late-session', $1, '/page-5', 'NO')`,
        [at(30)],
      );
      await refreshUntilFolded((text) => client.query(text), ["sessions", "rollups"]);
      for (const [table, { daysTogether }] of Object.entries(await layout())) {
        expect({ table, daysTogether }).toEqual({ table, daysTogether: true });
      }
    } finally {
      await client.end().catch(() => {});
      await scratch.drop();
    }
  });
});
