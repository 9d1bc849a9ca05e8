-- entry_planes(entries): the sketch planes of a set of visitor entries (register << 6 | value, see
-- visitor_entry, src/db/routines/visitor_entry.sql): plane k is a bit(32768) with the bits of the
-- registers whose largest value is at least k, so the union of two sketches is the bit_or of their
-- planes and bit_count of a merged plane counts the registers at or above k. An entry sets its
-- register's bit in planes 1 to its value, and bit_or keeps the largest value of a register
-- without a separate step. Each plane is written as hex, 64 registers per 16 digits, the empty
-- chunks between them padded in by lpad; the cast to bit(32768) pads the tail with zeros.
--
-- One set at a time: its aggregates are small, so hash tables stay in cache and nothing is sorted
-- across sets (the planes of a 1M-event seed's large dimension groups in 4 s, against 8 s as one
-- aggregate over all sets). insert_visitor_sketches (src/db/routines/insert_visitor_sketches.sql)
-- and refresh_dimension_sketches (src/db/routines/refresh_dimension_sketches.sql) write sketches
-- with it, and the filtered visitor counts of src/queries/insights/visitors.ts build the planes of
-- the sparse sketches they merge with it.
CREATE OR REPLACE FUNCTION entry_planes(entries integer[]) RETURNS TABLE (plane smallint, registers bit(32768))
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT plane::smallint,
    ('x' || string_agg(lpad(to_hex(bits), (chunk - coalesce(previous_chunk, -1)) * 16, '0'), '' ORDER BY chunk))::varbit::bit(32768)
  FROM (
    SELECT plane, chunk, bits, lag(chunk) OVER (PARTITION BY plane ORDER BY chunk) AS previous_chunk
    FROM (
      SELECT plane, entry >> 12 AS chunk, bit_or(1::bigint << (63 - ((entry >> 6) & 63))) AS bits
      FROM unnest(entries) AS entry, generate_series(1, entry & 63) AS plane
      GROUP BY plane, chunk
    ) AS plane_chunks
  ) AS ordered_chunks
  GROUP BY plane
$fn$;
--> statement-breakpoint
-- insert_visitor_sketches(target, keys, source): HyperLogLog sketches of visitors, one per
-- (project_id, key values), written into the table `target` as planes (entry_planes,
-- src/db/routines/entry_planes.sql). `source` is a query whose rows have the columns project_id,
-- the `keys` and `entry`, a visitor's register entry (visitor_entry, src/db/routines/visitor_entry.sql);
-- `keys` names the columns that, with project_id, identify a sketch in `target` (`hour` or `day`).
-- It only inserts: the caller deletes the sketches it rebuilds first.
--
-- Its callers: refresh_rollups (src/db/routines/refresh_rollups.sql) for the hourly
-- `visitor_sketches`, and refresh_day_sketches (src/db/routines/refresh_day_sketches.sql) for the
-- days of `visitor_day_sketches` that cannot be merged from hours. src/queries/insights/visitor-sketch.ts
-- estimates from them.
CREATE OR REPLACE FUNCTION insert_visitor_sketches(target text, keys text[], source text) RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  key_list text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) AS k);
  key_select text := (SELECT string_agg('v.' || quote_ident(k), ', ') FROM unnest(keys) AS k);
  group_keys text := (SELECT string_agg('g.' || quote_ident(k), ', ') FROM unnest(keys) AS k);
BEGIN
  EXECUTE format($sql$
  INSERT INTO %1$I (project_id, %2$s, plane, registers)
  SELECT g.project_id, %5$s, p.plane, p.registers
  FROM (
    SELECT v.project_id COLLATE "C" AS project_id, %3$s, array_agg(v.entry) AS entries
    FROM (%4$s) AS v
    GROUP BY 1, %3$s
  ) AS g
  CROSS JOIN LATERAL entry_planes(g.entries) AS p
  $sql$, target, key_list, key_select, source, group_keys);
END;
$fn$;
--> statement-breakpoint
-- refresh_day_sketches(): the day rows of the rollups (visitor_day_sketches, session_day_rollups,
-- page_day_rollups) of the (project_id, day) rows of the temporary table `rollup_days`, whose days
-- are local midnights in its `timezone`. refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) fills that table after the hours are rebuilt,
-- calls this, and only then records each project's timezone in rollup_timezones. A project whose
-- recorded timezone differs from its own has been re-zoned: its old session and page day rows are
-- deleted here (its old sketches by the caller), and `rollup_days` holds all of its days.
--
-- A day whose local midnights are whole UTC hours (every day of a zone with a whole-hour offset)
-- is built from its hours, which refresh_rollups (src/db/routines/refresh_rollups.sql) has just
-- written: its session and page rows are sums of the hourly rows, and its visitor sketch is the
-- union of the hours' sketches, the bit_or of their planes, so no session is hashed again. Days
-- of half-hour zones have no session or page day rows (the query layer reads day rows only for
-- whole-hour days) and their sketches are built from their sessions by insert_visitor_sketches
-- (src/db/routines/insert_visitor_sketches.sql).
CREATE OR REPLACE FUNCTION refresh_day_sketches() RETURNS void
LANGUAGE plpgsql
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
AS $fn$
BEGIN
  -- Projects whose timezone changed (the marker is updated after this): their old days go.
  DELETE FROM session_day_rollups r USING projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  WHERE r.project_id = p.id AND z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC');
  DELETE FROM page_day_rollups r USING projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  WHERE r.project_id = p.id AND z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC');

  DELETE FROM visitor_day_sketches r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;
  DELETE FROM session_day_rollups r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;
  DELETE FROM page_day_rollups r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;

  -- The days whose two midnights, this one and the next, are whole UTC hours: built from their hours.
  -- The next midnight is that of the next local date, not the day's first instant plus a day: a day
  -- without a midnight (a spring change at 00:00, as in America/Santiago) starts at 01:00, and the
  -- day after it at 00:00 again, which adding a day to 01:00 would count in both days.
  CREATE TEMPORARY TABLE whole_hour_days ON COMMIT DROP AS
  SELECT project_id, day, ((day AT TIME ZONE timezone)::date + 1)::timestamp AT TIME ZONE timezone AS next_day
  FROM rollup_days;
  DELETE FROM whole_hour_days
  WHERE date_trunc('hour', day, 'UTC') <> day OR date_trunc('hour', next_day, 'UTC') <> next_day;
  ANALYZE whole_hour_days;

  INSERT INTO visitor_day_sketches (project_id, day, plane, registers)
  SELECT d.project_id, d.day, v.plane, bit_or(v.registers)
  FROM whole_hour_days d
  JOIN visitor_sketches v ON v.project_id = d.project_id AND v.hour >= d.day AND v.hour < d.next_day
  GROUP BY d.project_id, d.day, v.plane;

  -- The sketches of the other days, from their sessions.
  PERFORM insert_visitor_sketches('visitor_day_sketches', ARRAY['day'],
    $$SELECT s.project_id, d.day, visitor_entry(s.profile_id) AS entry
      FROM rollup_days d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day
      AND s.started_at < ((d.day AT TIME ZONE d.timezone)::date + 1)::timestamp AT TIME ZONE d.timezone
      WHERE NOT EXISTS (SELECT 1 FROM whole_hour_days w WHERE w.project_id = d.project_id AND w.day = d.day)$$);

  INSERT INTO session_day_rollups (project_id, day, dimension, name, prefix, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue)
  SELECT d.project_id, d.day, r.dimension, r.name, r.prefix, sum(r.sessions), sum(r.bounces), sum(r.screen_views),
    sum(r.duration_ms), sum(r.timed_sessions), sum(r.revenue)
  FROM whole_hour_days d
  JOIN session_rollups r ON r.project_id = d.project_id AND r.hour >= d.day AND r.hour < d.next_day
  GROUP BY d.project_id, d.day, r.dimension, r.name, r.prefix;

  INSERT INTO page_day_rollups (project_id, day, origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views)
  SELECT d.project_id, d.day, r.origin, r.path, max(r.title), sum(r.sessions), sum(r.pageviews), sum(r.bounces),
    sum(r.duration_ms), sum(r.timed_views)
  FROM whole_hour_days d
  JOIN page_rollups r ON r.project_id = d.project_id AND r.hour >= d.day AND r.hour < d.next_day
  GROUP BY d.project_id, d.day, r.origin, r.path;

  DROP TABLE whole_hour_days;
END;
$fn$;
--> statement-breakpoint
-- refresh_dimension_sketches(rebuild_all): the visitor sketches per day and dimension value
-- (visitor_dimension_sketches) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this after the day
-- rollups and before it records each project's timezone in rollup_timezones, with the temporary
-- tables `touched_sessions` (the sessions of this run) and `touched_before` (their rows as they
-- were before this run; none for new sessions).
--
-- A day is the project's own (its timezone, UTC when it has none); a session counts under the
-- value of each dimension of session_dimensions() (src/db/routines/session_dimensions.sql) it has,
-- empty strings and NULL alike as "not set" (name NULL).
--
-- A (day, dimension, value) group is stored sparse while it holds at most `sparse_limit` distinct
-- register entries (visitor_entry, src/db/routines/visitor_entry.sql): one row, plane 0, with the
-- sorted entries. Larger groups are written as dense planes (entry_planes,
-- src/db/routines/entry_planes.sql). Dense planes cost more to write (a 1M-event full build: 13 s
-- with a limit of 1,024, 22 s with 128, 50 s and more with every group dense), sparse entries
-- cost more to read, since a filter turns the entries it selects into planes at query time. At
-- 10M events a limit of 128 answers 30-day filters on values of mid size in 40-60 ms (1,024:
-- 60-115 ms) and `isNot` over 90 days in 0.3 s (0.8 s), for a full build of 3.9 minutes (2.0).
--
-- What a run rebuilds and what it merges:
-- - a full build (`rebuild_all`: the first run, a rebuild of the rollups) builds every group;
-- - a project whose timezone changed gets all of its days rebuilt;
-- - a session that existed and now has another day, visitor or value of some dimension (a late
--   earlier event moved its start or its first event) makes its old and its new day rebuilt from
--   their sessions, since a sketch cannot forget a visitor;
-- - a new session is merged into the groups of its day and values by union, which adds its
--   visitor and changes nothing where the visitor is counted already; a sparse group that grows
--   past the limit is then written dense. A session that existed and did not change is counted
--   already and costs nothing.
CREATE OR REPLACE FUNCTION refresh_dimension_sketches(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  sparse_limit constant integer := 128;
  -- One aggregate per dimension over a table of sessions with their `day` and `entry`: the
  -- distinct entries of each (day, value) group, a hash aggregate each.
  groups_of text := (SELECT string_agg(format('SELECT project_id, day, %1$L AS dimension, %1$I AS name,'
      ' array_agg(DISTINCT entry ORDER BY entry) AS entries FROM %%1$I GROUP BY 1, 2, 4', d.dimension), ' UNION ALL ')
    FROM session_dimensions() AS d);
  -- The sessions of a scope, narrow: their day, entry and values; %s is the FROM clause that yields
  -- them as `s` and their project's zone as `z`.
  sessions_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' visitor_entry(s.profile_id) AS entry'
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %s';
BEGIN
  DROP TABLE IF EXISTS pg_temp.dimension_zones, pg_temp.dimension_days, pg_temp.dimension_sessions,
    pg_temp.dimension_groups;
  CREATE TEMPORARY TABLE dimension_zones ON COMMIT DROP AS
  SELECT p.id AS project_id, coalesce(p.timezone, 'UTC') AS timezone,
    rebuild_all OR z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC') AS rebuilt
  FROM projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id;

  -- The days of the other projects that lost a session or a value: before and now.
  EXECUTE format($sql$
  CREATE TEMPORARY TABLE dimension_days ON COMMIT DROP AS
  SELECT DISTINCT z.project_id, d.day
  FROM touched_before b
  JOIN sessions s ON s.project_id = b.project_id AND s.id = b.id
  JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt
  CROSS JOIN LATERAL (VALUES (date_trunc('day', b.started_at, z.timezone)), (date_trunc('day', s.started_at, z.timezone))) AS d(day)
  WHERE date_trunc('day', b.started_at, z.timezone) <> date_trunc('day', s.started_at, z.timezone)
    OR b.profile_id <> s.profile_id OR %s
  $sql$, (SELECT string_agg(format('nullif(b.%1$I, '''') IS DISTINCT FROM nullif(s.%1$I, '''')', d.dimension), ' OR ')
    FROM session_dimensions() AS d));

  -- Rebuilt: every group of the projects rebuilt whole and of those days, written anew.
  IF rebuild_all THEN
    TRUNCATE visitor_dimension_sketches;
  ELSE
    DELETE FROM visitor_dimension_sketches v USING dimension_zones z WHERE v.project_id = z.project_id AND z.rebuilt;
    DELETE FROM visitor_dimension_sketches v USING dimension_days d WHERE v.project_id = d.project_id AND v.day = d.day;
  END IF;
  EXECUTE format('CREATE TEMPORARY TABLE dimension_sessions ON COMMIT DROP AS ' || sessions_of,
    'dimension_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt'
    ' UNION ALL ' || format(sessions_of, 'dimension_days d JOIN dimension_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day'
    ' AND s.started_at < ((d.day AT TIME ZONE z.timezone)::date + 1)::timestamp AT TIME ZONE z.timezone'));
  EXECUTE format('CREATE TEMPORARY TABLE dimension_groups ON COMMIT DROP AS ' || groups_of, 'dimension_sessions');
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, entries)
  SELECT project_id, day, dimension, name, 0, entries FROM dimension_groups WHERE cardinality(entries) <= sparse_limit;
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM dimension_groups g CROSS JOIN LATERAL entry_planes(g.entries) AS p WHERE cardinality(g.entries) > sparse_limit;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- Merged: the new sessions of the other days.
  DROP TABLE dimension_sessions, dimension_groups;
  EXECUTE format('CREATE TEMPORARY TABLE dimension_sessions ON COMMIT DROP AS ' || sessions_of,
    'touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id'
    ' JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' WHERE NOT EXISTS (SELECT 1 FROM touched_before b WHERE b.project_id = s.project_id AND b.id = s.id)'
    ' AND NOT EXISTS (SELECT 1 FROM dimension_days d WHERE d.project_id = s.project_id'
    ' AND d.day = date_trunc(''day'', s.started_at, z.timezone))');
  EXECUTE format('CREATE TEMPORARY TABLE dimension_groups ON COMMIT DROP AS ' || groups_of, 'dimension_sessions');
  -- Into a dense group: the union of planes.
  INSERT INTO visitor_dimension_sketches AS v (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM dimension_groups g CROSS JOIN LATERAL entry_planes(g.entries) AS p
  WHERE EXISTS (SELECT 1 FROM visitor_dimension_sketches d WHERE d.project_id = g.project_id
    AND d.dimension = g.dimension AND d.name IS NOT DISTINCT FROM g.name AND d.day = g.day AND d.plane = 1)
  ON CONFLICT (project_id, dimension, name, day, plane) DO UPDATE SET registers = v.registers | excluded.registers;
  -- Into a sparse or a new group: the union of entries.
  INSERT INTO visitor_dimension_sketches AS v (project_id, day, dimension, name, plane, entries)
  SELECT g.project_id, g.day, g.dimension, g.name, 0, g.entries FROM dimension_groups g
  WHERE NOT EXISTS (SELECT 1 FROM visitor_dimension_sketches d WHERE d.project_id = g.project_id
    AND d.dimension = g.dimension AND d.name IS NOT DISTINCT FROM g.name AND d.day = g.day AND d.plane = 1)
  ON CONFLICT (project_id, dimension, name, day, plane) DO UPDATE
  SET entries = ARRAY(SELECT DISTINCT e FROM unnest(v.entries || excluded.entries) AS e ORDER BY e);
  -- A sparse group grown past the limit: written dense.
  WITH grown AS (
    DELETE FROM visitor_dimension_sketches v
    WHERE v.plane = 0 AND cardinality(v.entries) > sparse_limit AND EXISTS (SELECT 1 FROM dimension_sessions s
      WHERE s.project_id = v.project_id AND s.day = v.day)
    RETURNING v.project_id, v.day, v.dimension, v.name, v.entries
  )
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM grown g CROSS JOIN LATERAL entry_planes(g.entries) AS p;
END;
$fn$;
--> statement-breakpoint
-- refresh_rollups(units): the hourly rollups (session_rollups, page_rollups, visitor_sketches) and
-- the session pages (session_pages) of some hours: of every hour when `units` is NULL (a full
-- build), else of the (project_id, hour) rows of the temporary table named by `units`. Every row
-- of those hours is deleted and recomputed from their sessions, so a run is idempotent.
-- refresh_session_rollups (src/db/routines/refresh_session_rollups.sql) calls it in the same
-- transaction as it writes the sessions, with the hours its touched sessions started in, before
-- and after.
--
-- How it is built, and why:
-- - the sessions of the hours are copied once into a narrow temporary table with their UTC hour
--   and byte-order ("C") keys, and analyzed, so every later step reads them cheaply and is planned
--   from real row counts: the join to their events is a hash join over all events on a full build,
--   the (project_id, session_id) index otherwise;
-- - session_rollups: all sessions ('' dimension), then one hash aggregate per breakdown dimension
--   (session_dimensions(), src/db/routines/session_dimensions.sql).
--   Grouping sets sort the sessions once per set: 305k sessions took 12 s that way, under 7 s this
--   way;
-- - session_pages: every (origin, path) of any event of each session, with that page's screen
--   views, written in time order; the page rollups are summed from those rows as they are written
--   (a session counts once per page), so the events are joined once;
-- - visitor_sketches by insert_visitor_sketches (src/db/routines/insert_visitor_sketches.sql).
CREATE OR REPLACE FUNCTION refresh_rollups(units text) RETURNS void
LANGUAGE plpgsql
-- The planner cannot estimate how few (hour, value) groups there are and would sort instead.
SET enable_sort = off
-- JIT compiles the wide aggregate expressions for hundreds of milliseconds; these scans and
-- aggregates gain nothing from it.
SET jit = off
-- DROP TABLE IF EXISTS of the temporary table would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  aggregates text := 'count(*), count(*) FILTER (WHERE is_bounce), sum(screen_view_count),'
    ' coalesce(sum(duration_ms) FILTER (WHERE duration_ms > 0), 0), count(*) FILTER (WHERE duration_ms > 0), sum(revenue)';
  source text := CASE WHEN units IS NULL THEN 'sessions s' ELSE format(
    '%I d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.hour AND s.started_at < d.hour + interval ''1 hour''',
    units) END;
  rebuilt bigint;
  page_indexes text[];
  page_index_names text[];
  page_index text;
BEGIN
  IF units IS NULL THEN
    TRUNCATE session_rollups, page_rollups, session_pages, visitor_sketches;
    -- A full build writes every session page: building their indexes afterwards, from their
    -- definitions as they stand, is several times cheaper than maintaining them row by row.
    SELECT array_agg(pg_get_indexdef(indexrelid)), array_agg(indexrelid::regclass::text)
    INTO page_indexes, page_index_names
    FROM pg_index WHERE indrelid = 'session_pages'::regclass;
    IF page_index_names IS NOT NULL THEN
      EXECUTE (SELECT 'DROP INDEX ' || string_agg(name, ', ') FROM unnest(page_index_names) AS name);
    END IF;
  ELSE
    EXECUTE format('DELETE FROM session_rollups r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM page_rollups r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM visitor_sketches r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM session_pages r USING %I d WHERE r.project_id = d.project_id'
      ' AND r.started_at >= d.hour AND r.started_at < d.hour + interval ''1 hour''', units);
  END IF;

  -- Empty strings are "not set", like NULL (the breakdown endpoints' rule).
  DROP TABLE IF EXISTS pg_temp.rollup_sessions;
  EXECUTE format('CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS'
      ' SELECT s.project_id COLLATE "C" AS project_id, s.id, s.profile_id, s.started_at,'
      ' date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') AS hour,'
      ' s.is_bounce, s.screen_view_count, s.duration_ms, s.revenue', '')
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() d)
    || format(' FROM %s', source);
  ANALYZE rollup_sessions;

  -- All sessions ('' dimension), then every breakdown dimension.
  EXECUTE format('INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, sessions, bounces,'
      ' screen_views, duration_ms, timed_sessions, revenue)'
      ' SELECT project_id, hour, '''', NULL, NULL, %s FROM rollup_sessions GROUP BY 1, 2', aggregates)
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, hour, %L, %I, %s, %s FROM rollup_sessions GROUP BY 1, 2, 4, 5',
      d.dimension, d.dimension, coalesce(quote_ident(d.prefix), 'NULL::text'), aggregates), '')
      FROM session_dimensions() AS d);

  -- Session pages: every (origin, path) of any event of each session, with that page's screen
  -- views. The page rollups are their sums over the pages with a screen view (a session counts
  -- once per page), taken from the rows as they are written.
  WITH pages AS (
    INSERT INTO session_pages (project_id, session_id, started_at, is_bounce, origin, path, title, views, duration_ms, timed_views)
    SELECT * FROM (
      SELECT rs.project_id, rs.id, rs.started_at, rs.is_bounce, e.origin, e.path,
        max(e.title) FILTER (WHERE e.name = 'screen_view'),
        count(*) FILTER (WHERE e.name = 'screen_view'),
        coalesce(sum(e.duration) FILTER (WHERE e.name = 'screen_view' AND e.duration > 0), 0),
        count(*) FILTER (WHERE e.name = 'screen_view' AND e.duration > 0)
      FROM rollup_sessions rs
      JOIN events e ON e.project_id = rs.project_id AND e.session_id = rs.id
      GROUP BY rs.project_id, rs.id, rs.started_at, rs.is_bounce, e.origin, e.path
    ) AS session_page
    -- Written in time order, a window's rows sit together: a one-day page list then reads a
    -- ninetieth of a 90-day table's pages, not rows scattered over all of them (10M events:
    -- 0.65 s -> 0.15 s). Later runs append recent hours, which keeps the order. The subquery
    -- keeps the grouping hashed: only its result is sorted, on the start alone.
    ORDER BY started_at
    RETURNING project_id, started_at, is_bounce, origin, path, title, views, duration_ms, timed_views
  )
  INSERT INTO page_rollups (project_id, hour, origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views)
  SELECT project_id, date_bin('1 hour', started_at, timestamptz '2000-01-01 00:00:00+00'), origin, path,
    max(title), count(*), sum(views), count(*) FILTER (WHERE is_bounce), sum(duration_ms), sum(timed_views)
  FROM pages
  WHERE views > 0
  GROUP BY 1, 2, 3, 4;

  FOREACH page_index IN ARRAY coalesce(page_indexes, '{}') LOOP
    EXECUTE page_index;
  END LOOP;

  -- Fresh statistics when this run rewrote a large share of the sessions and their pages (the
  -- first build, a bulk load), ahead of autovacuum: a table planned as nearly empty would be
  -- scanned once per session of the other.
  SELECT count(*) INTO rebuilt FROM rollup_sessions;
  IF rebuilt > 1000 AND rebuilt > 0.1 * (SELECT reltuples FROM pg_class WHERE oid = 'sessions'::regclass) THEN
    ANALYZE sessions;
  END IF;
  IF rebuilt > 1000 AND rebuilt > 0.1 * (SELECT reltuples FROM pg_class WHERE oid = 'session_pages'::regclass) THEN
    ANALYZE session_pages;
  END IF;

  PERFORM insert_visitor_sketches('visitor_sketches', ARRAY['hour'],
    'SELECT s.project_id, s.hour, visitor_entry(s.profile_id) AS entry FROM rollup_sessions s');
  DROP TABLE rollup_sessions;
END;
$fn$;
--> statement-breakpoint
-- refresh_session_rollups(): the session family of the derived tables. It derives `sessions`, one
-- row per (project_id, session_id), from the events, and then, in the same transaction, the
-- hourly rollups and session pages (refresh_rollups, src/db/routines/refresh_rollups.sql), the
-- day rollups and sketches (refresh_day_sketches, src/db/routines/refresh_day_sketches.sql) and the
-- visitor sketches per day and dimension value (refresh_dimension_sketches,
-- src/db/routines/refresh_dimension_sketches.sql), so both query paths always see the same data. It returns the number of sessions it wrote.
-- refresh_derived (src/db/routines/refresh_derived.sql) calls it, and the one-run-at-a-time lock
-- taken here bears that entry point's name.
--
-- It is the only writer of `sessions`. It is incremental (it recomputes only the sessions that
-- received events since its last run) and idempotent (a session is always recomputed from all of
-- its events, so running it again, or feeding the same events in one batch or in many, gives the
-- same rows).
--
-- "Since the last run" is tracked by the writing transaction's id (events.ingest_xid) rather than
-- by time or a sequence, so out-of-order commits are never missed: a run folds in every visible
-- row at or above the watermark, then moves the watermark to the oldest transaction that was
-- still open when it started. Rows it could not see yet all lie above that point; rows it saw
-- above it are folded in again next time, which is harmless because a run is idempotent.
--
-- Sessions are computed in one sorted pass: one sort of narrow rows by (session, time) feeds two
-- window aggregates and one group aggregate, and the first event's attributes are then fetched by
-- its id. (Joining four derived sets, first event, totals, entry and exit, behind a materialized
-- CTE was quadratic: the planner has no statistics for such a CTE, estimated a handful of rows and
-- chose nested loops, minutes for 50k events.) A cron run touches few sessions and takes
-- milliseconds. New sessions are inserted in the order they started (see the ORDER BY below);
-- existing rows keep their place.
--
-- The touched sessions are kept in a temporary table, and their rows as they were before this run
-- in another, so that the hours and days they started in before this run can be read after the
-- upsert: the rollups of those hours and days, and of the
-- ones they start in now, are recomputed from their sessions. The first run, and any run after
-- the 'rollups' watermark was reset to 0 (by a migration that adds a derived table), rebuild every
-- rollup. A project whose timezone is new or changed gets all of its days rebuilt.
CREATE OR REPLACE FUNCTION refresh_session_rollups() RETURNS integer
LANGUAGE plpgsql
-- A bulk load sorts every new event once; give that sort room instead of spilling to disk.
SET work_mem = '256MB'
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  rollups_xid bigint;
  -- Taken before anything else: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
BEGIN
  -- One run at a time: a concurrent caller waits here, then finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
  INSERT INTO derived_state (name) VALUES ('sessions'), ('rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'sessions';
  SELECT processed_xid INTO rollups_xid FROM derived_state WHERE name = 'rollups';

  DROP TABLE IF EXISTS pg_temp.touched_sessions, pg_temp.touched_before, pg_temp.touched_starts,
    pg_temp.rollup_hours, pg_temp.rollup_days;
  CREATE TEMPORARY TABLE touched_sessions (project_id text, session_id text) ON COMMIT DROP;
  -- The touched sessions as they were before this run (none for new ones).
  CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  CREATE TEMPORARY TABLE touched_starts (project_id text, started_at timestamptz) ON COMMIT DROP;
  IF from_xid > 0 THEN
    INSERT INTO touched_sessions SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid;
    ANALYZE touched_sessions;
    INSERT INTO touched_before SELECT s.*
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    ANALYZE touched_before;
    -- When these sessions started before this run: the rollups of those hours and days lose them or change.
    INSERT INTO touched_starts SELECT project_id, started_at FROM touched_before;
  END IF;

  -- Every event of every session that received one since the last run. Planned afresh each
  -- time (EXECUTE): the first run reads all events without a join, later runs reach the few
  -- touched sessions through the indexes.
  EXECUTE format($sql$
  WITH ordered AS (
    -- The sort key starts with the high-cardinality session id, in byte order ("C"): comparisons
    -- are then memcmp on abbreviated keys rather than the locale's collation (3x faster here).
    -- The grouping below reuses that order.
    SELECT e.session_id COLLATE "C" AS session_id, e.project_id COLLATE "C" AS project_id, e.id, e.name, e.created_at, e.revenue, e.path, e.origin,
      row_number() OVER in_order AS position,
      count(*) FILTER (WHERE e.name = 'screen_view') OVER in_order AS views_so_far,
      count(*) FILTER (WHERE e.name = 'screen_view') OVER (PARTITION BY e.session_id COLLATE "C", e.project_id COLLATE "C") AS views
    FROM events e
    WHERE %s
    WINDOW in_order AS (PARTITION BY e.session_id COLLATE "C", e.project_id COLLATE "C" ORDER BY e.created_at, e.id ROWS UNBOUNDED PRECEDING)
  ),
  summary AS (
    SELECT session_id, project_id,
      min(created_at) AS started_at, max(created_at) AS ended_at, count(*)::int AS event_count,
      max(views)::int AS views, coalesce(sum(revenue), 0)::bigint AS revenue,
      -- Entry and exit pages: the first and the last screen view in time order.
      max(path) FILTER (WHERE name = 'screen_view' AND views_so_far = 1) AS entry_path,
      max(origin) FILTER (WHERE name = 'screen_view' AND views_so_far = 1) AS entry_origin,
      max(path) FILTER (WHERE name = 'screen_view' AND views_so_far = views) AS exit_path,
      max(origin) FILTER (WHERE name = 'screen_view' AND views_so_far = views) AS exit_origin,
      (array_agg(id) FILTER (WHERE position = 1))[1] AS first_event_id
    FROM ordered
    GROUP BY session_id, project_id
  )
  INSERT INTO sessions (
    project_id, id, started_at, ended_at, duration_ms, event_count, screen_view_count, is_bounce, revenue,
    entry_path, entry_origin, exit_path, exit_origin, profile_id, device_id, referrer, referrer_name, referrer_type, utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, region, city, device, brand, model, browser, browser_version, os, os_version
  )
  SELECT s.project_id, s.session_id, s.started_at, s.ended_at,
      (extract(epoch FROM s.ended_at - s.started_at) * 1000)::bigint,
      s.event_count, s.views, s.views <= 1, s.revenue, s.entry_path, s.entry_origin, s.exit_path, s.exit_origin,
      -- Visitor and attributes: those of the first event.
      first_event.profile_id, first_event.device_id, first_event.referrer, first_event.referrer_name, first_event.referrer_type, first_event.utm_source, first_event.utm_medium, first_event.utm_campaign, first_event.utm_term, first_event.utm_content, first_event.country, first_event.region, first_event.city, first_event.device, first_event.brand, first_event.model, first_event.browser, first_event.browser_version, first_event.os, first_event.os_version
  FROM summary s
  JOIN events first_event ON first_event.id = s.first_event_id
  -- New sessions are written in the order they started, as live ingest appends them, so a
  -- window's sessions share pages also after a bulk load: a filtered one-day query then reads a
  -- few hundred pages instead of one per session scattered over the whole table. A cron run
  -- sorts a handful of rows, and a bulk load does not slow down measurably (a 1M-event seed:
  -- 28.5 vs 29.3 s).
  ORDER BY s.started_at
  ON CONFLICT (project_id, id) DO UPDATE SET
    profile_id = excluded.profile_id,
    device_id = excluded.device_id,
    started_at = excluded.started_at,
    ended_at = excluded.ended_at,
    duration_ms = excluded.duration_ms,
    event_count = excluded.event_count,
    screen_view_count = excluded.screen_view_count,
    is_bounce = excluded.is_bounce,
    revenue = excluded.revenue,
    entry_path = excluded.entry_path,
    entry_origin = excluded.entry_origin,
    exit_path = excluded.exit_path,
    exit_origin = excluded.exit_origin,
    referrer = excluded.referrer,
    referrer_name = excluded.referrer_name,
    referrer_type = excluded.referrer_type,
    utm_source = excluded.utm_source,
    utm_medium = excluded.utm_medium,
    utm_campaign = excluded.utm_campaign,
    utm_term = excluded.utm_term,
    utm_content = excluded.utm_content,
    country = excluded.country,
    region = excluded.region,
    city = excluded.city,
    device = excluded.device,
    brand = excluded.brand,
    model = excluded.model,
    browser = excluded.browser,
    browser_version = excluded.browser_version,
    os = excluded.os,
    os_version = excluded.os_version
  $sql$, CASE WHEN from_xid = 0 THEN 'true' ELSE
    '(e.project_id, e.session_id) IN (SELECT project_id, session_id FROM touched_sessions)' END);
  GET DIAGNOSTICS touched = ROW_COUNT;

  IF from_xid = 0 OR rollups_xid = 0 THEN
    PERFORM refresh_rollups(NULL);
    TRUNCATE visitor_day_sketches, rollup_timezones;
  ELSE
    -- ...and when they start now.
    INSERT INTO touched_starts SELECT s.project_id, s.started_at
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    CREATE TEMPORARY TABLE rollup_hours ON COMMIT DROP AS
      SELECT DISTINCT project_id, date_trunc('hour', started_at, 'UTC') AS hour FROM touched_starts;
    ANALYZE rollup_hours;
    PERFORM refresh_rollups('rollup_hours');
  END IF;

  -- Day sketches: every day of the projects whose timezone is new or changed (all of them on a
  -- rebuild), and the days the touched sessions started in, before and now, for the others.
  CREATE TEMPORARY TABLE rollup_days (project_id text, day timestamptz, timezone text) ON COMMIT DROP;
  WITH zones AS (
    SELECT p.id AS project_id, coalesce(p.timezone, 'UTC') AS timezone, z.timezone AS built_in
    FROM projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  ), rezoned AS (
    DELETE FROM visitor_day_sketches v USING zones
    WHERE v.project_id = zones.project_id AND zones.built_in IS DISTINCT FROM zones.timezone
    RETURNING v.project_id
  )
  INSERT INTO rollup_days
  SELECT DISTINCT s.project_id, date_trunc('day', s.started_at, zones.timezone), zones.timezone
  FROM zones JOIN sessions s ON s.project_id = zones.project_id
  WHERE zones.built_in IS DISTINCT FROM zones.timezone
  UNION
  SELECT DISTINCT t.project_id, date_trunc('day', t.started_at, zones.timezone), zones.timezone
  FROM touched_starts t JOIN zones ON zones.project_id = t.project_id
  WHERE zones.built_in IS NOT DISTINCT FROM zones.timezone;
  ANALYZE rollup_days;
  PERFORM refresh_day_sketches();
  PERFORM refresh_dimension_sketches(from_xid = 0 OR rollups_xid = 0);
  INSERT INTO rollup_timezones (project_id, timezone)
  SELECT id, coalesce(timezone, 'UTC') FROM projects
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE rollup_timezones.timezone IS DISTINCT FROM excluded.timezone;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now()
  WHERE name IN ('sessions', 'rollups');
  RETURN touched;
END;
$fn$;
--> statement-breakpoint
-- session_dimensions(): the breakdown dimensions of sessions, in their order, each with the
-- dimension that prefixes its values where a value alone is ambiguous (a region's country, a
-- browser version's browser), NULL where none. The routines that build per-dimension rows read
-- the list here: refresh_rollups (src/db/routines/refresh_rollups.sql) and
-- refresh_dimension_sketches (src/db/routines/refresh_dimension_sketches.sql). BREAKDOWN_DIMENSIONS
-- and DIMENSION_PREFIXES in src/lib/dimensions.ts are the TypeScript side, and
-- test/node/routines.test.ts holds the two equal.
CREATE OR REPLACE FUNCTION session_dimensions() RETURNS TABLE (dimension text, prefix text)
LANGUAGE plpgsql
IMMUTABLE
AS $fn$
DECLARE
  dimensions text[] := ARRAY['referrer', 'referrer_name', 'referrer_type', 'country', 'region', 'city',
    'device', 'brand', 'model', 'browser', 'browser_version', 'os', 'os_version',
    'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];
  prefixes text[] := ARRAY[NULL, NULL, NULL, NULL, 'country', 'country',
    NULL, NULL, NULL, NULL, 'browser', NULL, 'os',
    NULL, NULL, NULL, NULL, NULL];
BEGIN
  RETURN QUERY SELECT * FROM unnest(dimensions, prefixes);
END;
$fn$;
--> statement-breakpoint
-- visitor_entry(profile_id): a visitor's entry in a HyperLogLog sketch of 2^15 registers, as one
-- integer: register << 6 | value. The visitor is hashed to 64 bits by hashtextextended, which every
-- Postgres has built in: the low 15 bits choose the register, and the lowest set bit of the other
-- 49 gives the value (1-49, 50 when none is set). A sketch keeps, per register, the largest value
-- any of its visitors has. insert_visitor_sketches (src/db/routines/insert_visitor_sketches.sql)
-- writes sketches from entries, and the sparse rows of visitor_dimension_sketches store them.
--
-- One expression, so the planner inlines it into the queries that call it: w & -w isolates the
-- lowest set bit of w, a power of two whose log2 is exact after rounding; ln(NULL) for w = 0 gives
-- the value 50 through coalesce.
CREATE OR REPLACE FUNCTION visitor_entry(profile_id text) RETURNS integer
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT ((hashtextextended(profile_id, 0) & 32767)::integer << 6)
    | coalesce(round(ln(nullif(
        ((hashtextextended(profile_id, 0) >> 15) & 562949953421311)
        & -((hashtextextended(profile_id, 0) >> 15) & 562949953421311), 0)::float8) / ln(2.0))::integer + 1, 50)
$fn$;
--> statement-breakpoint
-- insert_visitor_sketches (its callers now hand it register entries) takes over from
-- refresh_visitor_sketches, which none of the routines above calls any more.
DROP FUNCTION IF EXISTS refresh_visitor_sketches(text, text, text, text);
--> statement-breakpoint
-- Existing data: the new sketches are built here, under the refresh's lock, so no query ever
-- finds days without them. refresh_dimension_sketches compares the touched sessions of a run with
-- their rows before it; a full build has none.
SELECT pg_advisory_xact_lock(hashtext('refresh_derived'));
--> statement-breakpoint
DROP TABLE IF EXISTS pg_temp.touched_before, pg_temp.touched_sessions;
--> statement-breakpoint
CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
--> statement-breakpoint
CREATE TEMPORARY TABLE touched_sessions (project_id text, session_id text) ON COMMIT DROP;
--> statement-breakpoint
SELECT refresh_dimension_sketches(true);
