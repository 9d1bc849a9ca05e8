-- refresh_rollups(rebuild_all): the session and page rollups per hour and per project day
-- (session_rollups, session_day_rollups, page_rollups, page_day_rollups), the session pages
-- (session_pages) and the session names (session_names) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this first after
-- writing the sessions, with the temporary tables `touched_after` (the sessions of this run as it
-- wrote them), `touched_before` (their rows as they were before this run; none for new sessions),
-- `touched_pages_before` and `touched_names_before` (their session pages and names as they were),
-- and leaves `touched_pages` and `touched_names` (as they are now) to the routines after it.
--
-- An hour is the UTC hour of a session's start, a day the project's (its timezone, UTC when it
-- has none). A session counts in the '' dimension (all sessions) and under its value of each
-- dimension of session_dimensions() (src/db/routines/session_dimensions.sql), empty strings and
-- NULL alike as "not set", and under each path its events carry and each event name it holds
-- (dimensions 'path' and 'name', no row for "not set"); a page row counts a session once per
-- (origin, path, title) it screened.
--
-- Every column is a sum, so the rows are maintained by difference (add_rollup_rows,
-- src/db/routines/add_rollup_rows.sql): the touched sessions and their pages as they were are
-- subtracted, as they are now added, and a group left without sessions is deleted. A run costs in
-- proportion to the sessions it touched, whatever an hour or a day holds (rebuilding the touched
-- hours, as this did before, took 11 s a minute at 1,000 events/s and grew through the hour). The
-- session pages of a touched session are deleted and written again from its events. A full build
-- (`rebuild_all`) writes everything from all sessions and events, and the day rows of a project
-- whose timezone changed (derived_zones, src/db/routines/derived_zones.sql) are built from all of
-- its sessions and pages.
--
-- Each dimension is one hash aggregate over a narrow temporary copy of the sessions: grouping sets
-- sort the sessions once per set (305k sessions: 12 s that way, under 7 s this way).
CREATE OR REPLACE FUNCTION refresh_rollups(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
-- The hash aggregates of a full build hold a dimension's groups of every hour at once; the planner
-- cannot estimate how few groups there are and would sort instead.
SET work_mem = '256MB'
SET enable_sort = off
-- JIT compiles the wide aggregate expressions for hundreds of milliseconds; these scans and
-- aggregates gain nothing from it.
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['rollup_sessions', 'rollup_pages', 'rollup_values'];
  session_sums text[] := ARRAY['sessions', 'bounces', 'screen_views', 'duration_ms', 'timed_sessions', 'revenue'];
  page_sums text[] := ARRAY['sessions', 'pageviews', 'bounces', 'duration_ms', 'timed_views'];
  -- Some sessions, narrow: their hour and day (either NULL where this run does not write it),
  -- values and signed contributions to each sum. %1$s is the FROM clause that yields them as `s`
  -- and their project's zone as `z`, %2$s the sign, %3$s and %4$s whether their hour and day count.
  -- Events of a project without a `projects` row have hours but no days (no zone to cut them in).
  -- The sums come before the 18 values, so each aggregate decodes a row only up to the value it
  -- groups by (a full build at 1M events: 13.4 s for the hour and day rows with the sums last,
  -- 8.8 s this way).
  sessions_of text := 'SELECT s.project_id COLLATE "C" AS project_id,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', s.started_at, z.timezone) END AS day'
    || ', ' || signed_session_sums('%2$s')
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %1$s';
  -- Those rows summed per hour, day and values: a touched session that stayed in its hour and day
  -- with the same values nets its old and new rows into one.
  sessions_netted text := 'SELECT project_id, hour, day, sum(sessions) AS sessions, sum(bounces) AS bounces,'
       ' sum(screen_views) AS screen_views, sum(duration_ms)::float8 AS duration_ms, sum(timed_sessions) AS timed_sessions,'
       ' sum(revenue)::float8 AS revenue'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM (%s) AS signed GROUP BY project_id, hour, day'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d);
  -- The sums per unit (%1$I, `hour` or `day`) of all sessions and of every dimension's values in
  -- rollup_sessions. Durations and revenue are summed as float8, exact below 2^53.
  session_aggregates text := 'sum(sessions) AS sessions, sum(bounces) AS bounces, sum(screen_views) AS screen_views,'
    ' sum(duration_ms::float8) AS duration_ms, sum(timed_sessions) AS timed_sessions, sum(revenue::float8) AS revenue';
  session_groups text := format('SELECT project_id, %%1$I, '''' AS dimension, NULL::text AS name, NULL::text AS prefix, %s'
      ' FROM rollup_sessions WHERE %%1$I IS NOT NULL GROUP BY 1, 2', session_aggregates)
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, %%1$I, %1$L, %1$I, %2$s, %3$s'
      ' FROM rollup_sessions WHERE %%1$I IS NOT NULL GROUP BY 1, 2, 4, 5',
      d.dimension, coalesce(quote_ident(d.prefix), 'NULL::text'), session_aggregates), '')
      FROM session_dimensions() AS d);
  -- The same sessions once per value of the multi-valued dimensions, each path and each event name
  -- (session_values_join, src/db/routines/session_values_join.sql): %1$s yields them as `s`, those
  -- values as `f` and their zone as `z`. They make the rows of the 'path' and 'name' dimensions,
  -- which answer "sessions with an event on path …" as the other dimensions' rows answer a filter.
  values_of text := 'SELECT s.project_id COLLATE "C" AS project_id,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', s.started_at, z.timezone) END AS day'
    || ', ' || signed_session_sums('%2$s') || ', f.dimension, f.value COLLATE "C" AS value FROM %1$s';
  values_netted text := 'SELECT project_id, hour, day, dimension, value, sum(sessions) AS sessions, sum(bounces) AS bounces,'
    ' sum(screen_views) AS screen_views, sum(duration_ms)::float8 AS duration_ms, sum(timed_sessions) AS timed_sessions,'
    ' sum(revenue)::float8 AS revenue FROM (%s) AS signed GROUP BY project_id, hour, day, dimension, value';
  value_groups text := format('SELECT project_id, %%1$I, dimension, value AS name, NULL::text AS prefix, %s'
    ' FROM rollup_values WHERE %%1$I IS NOT NULL GROUP BY 1, 2, 3, 4', session_aggregates);
  -- Screened pages, narrow, signed like the sessions: %1$s yields them as `p` with their
  -- project's zone as `z`.
  pages_of text := 'SELECT p.project_id COLLATE "C" AS project_id,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', p.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', p.started_at, z.timezone) END AS day,'
    ' p.origin COLLATE "C" AS origin, p.path COLLATE "C" AS path, p.title COLLATE "C" AS title,'
    ' %2$s::integer AS sessions, %2$s * p.views AS pageviews, CASE WHEN p.is_bounce THEN %2$s ELSE 0 END AS bounces,'
    ' %2$s * p.duration_ms AS duration_ms, %2$s * p.timed_views AS timed_views FROM %1$s AND p.views > 0';
  pages_netted text := 'SELECT project_id, hour, day, origin, path, title, sum(sessions) AS sessions,'
    ' sum(pageviews) AS pageviews, sum(bounces) AS bounces, sum(duration_ms)::float8 AS duration_ms, sum(timed_views) AS timed_views'
    ' FROM (%s) AS signed GROUP BY project_id, hour, day, origin, path, title';
  page_groups text := 'SELECT project_id, %1$I, origin, path, title, sum(sessions) AS sessions, sum(pageviews) AS pageviews,'
    ' sum(bounces) AS bounces, sum(duration_ms::float8) AS duration_ms, sum(timed_views) AS timed_views'
    ' FROM rollup_pages WHERE %1$I IS NOT NULL GROUP BY 1, 2, 3, 4, 5';
  -- On a full build, the statements that make the written tables' indexes again
  -- (set_aside_indexes, src/db/routines/set_aside_indexes.sql).
  set_aside text[] := '{}';
  pages_written bigint;
  rezoned boolean;
BEGIN
  DROP TABLE IF EXISTS pg_temp.rollup_zones, pg_temp.rollup_sessions, pg_temp.rollup_pages, pg_temp.rollup_values,
    pg_temp.touched_pages, pg_temp.touched_names;
  CREATE TEMPORARY TABLE rollup_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  -- Whether some project's day rows are rebuilt whole in this incremental run (its timezone changed).
  rezoned := NOT rebuild_all AND EXISTS (SELECT 1 FROM rollup_zones WHERE rollup_zones.rebuilt);
  CREATE TEMPORARY TABLE touched_pages ON COMMIT DROP AS SELECT * FROM session_pages WITH NO DATA;
  CREATE TEMPORARY TABLE touched_names ON COMMIT DROP AS SELECT * FROM session_names WITH NO DATA;

  IF rebuild_all THEN
    TRUNCATE session_rollups, session_day_rollups, page_rollups, page_day_rollups, session_pages, session_names;
    -- Every session page and name and every rollup row is written: building their indexes
    -- afterwards is several times cheaper than maintaining them row by row.
    set_aside := set_aside_indexes('session_pages') || set_aside_indexes('session_names')
      || set_aside_indexes('session_rollups') || set_aside_indexes('session_day_rollups')
      || set_aside_indexes('page_rollups') || set_aside_indexes('page_day_rollups');
    EXECUTE 'CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS '
      || format(sessions_of, 'sessions s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'true');
  ELSIF rezoned THEN
    -- Projects whose timezone changed: their day rows, built again from all of their sessions.
    EXECUTE 'DELETE FROM session_day_rollups r USING rollup_zones z WHERE r.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 'r');
    EXECUTE 'DELETE FROM page_day_rollups r USING rollup_zones z WHERE r.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 'r');
    EXECUTE 'CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS '
      || format(sessions_of, 'rollup_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 's'), '1', 'false', 'true');
  END IF;
  IF rebuild_all OR rezoned THEN
    ANALYZE rollup_sessions;
    EXECUTE format('INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(session_groups, 'hour');
    EXECUTE format('INSERT INTO session_day_rollups (project_id, day, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(session_groups, 'day');
  END IF;

  -- Session pages: every (origin, path) of any event of each session, with that page's screen
  -- views, of every session on a full build and of the touched ones otherwise.
  EXECUTE format($sql$
  INSERT INTO touched_pages (project_id, session_id, started_at, is_bounce, origin, path, title, views, duration_ms, timed_views)
  SELECT s.project_id, s.id, s.started_at, s.is_bounce, e.origin, e.path,
    max(e.title) FILTER (WHERE e.name = 'screen_view'),
    count(*) FILTER (WHERE e.name = 'screen_view'),
    coalesce(sum(e.duration) FILTER (WHERE e.name = 'screen_view' AND e.duration > 0), 0),
    count(*) FILTER (WHERE e.name = 'screen_view' AND e.duration > 0)
  FROM %s
  JOIN events e ON e.project_id = s.project_id AND e.session_id = s.id
  GROUP BY s.project_id, s.id, s.started_at, s.is_bounce, e.origin, e.path
  $sql$, CASE WHEN rebuild_all THEN 'sessions s' ELSE
    'touched_after s' END);
  ANALYZE touched_pages;
  -- Unchanged pages stay in place (replace_session_rows, src/db/routines/replace_session_rows.sql).
  PERFORM replace_session_rows('session_pages', 'touched_pages', 'touched_pages_before', rebuild_all);
  -- Session names likewise: each event name of each session, the same ones left in place.
  EXECUTE format($sql$
  INSERT INTO touched_names (project_id, session_id, started_at, name)
  SELECT DISTINCT s.project_id, s.id, s.started_at, e.name
  FROM %s
  JOIN events e ON e.project_id = s.project_id AND e.session_id = s.id
  $sql$, CASE WHEN rebuild_all THEN 'sessions s' ELSE 'touched_after s' END);
  ANALYZE touched_names;
  PERFORM replace_session_rows('session_names', 'touched_names', 'touched_names_before', rebuild_all);

  IF rebuild_all THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_pages ON COMMIT DROP AS '
      || format(pages_of, 'touched_pages p LEFT JOIN rollup_zones z ON z.project_id = p.project_id WHERE true', '1', 'true', 'true');
  ELSIF rezoned THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_pages ON COMMIT DROP AS '
      || format(pages_of, 'rollup_zones z JOIN session_pages p ON p.project_id = z.project_id WHERE z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 'p'), '1', 'false', 'true');
  END IF;
  IF rebuild_all OR rezoned THEN
    ANALYZE rollup_pages;
    EXECUTE format('INSERT INTO page_rollups (project_id, hour, origin, path, title, %s) ', array_to_string(page_sums, ', '))
      || format(page_groups, 'hour');
    EXECUTE format('INSERT INTO page_day_rollups (project_id, day, origin, path, title, %s) ', array_to_string(page_sums, ', '))
      || format(page_groups, 'day');
  END IF;

  -- The 'path' and 'name' dimensions of the session rollups, from the pages and names just written.
  IF rebuild_all THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_values ON COMMIT DROP AS ' || format(values_of,
      'sessions s LEFT JOIN rollup_zones z ON z.project_id = s.project_id' || session_values_join('after'),
      '1', 'true', 'true');
  ELSIF rezoned THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_values ON COMMIT DROP AS ' || format(values_of,
      'rollup_zones z JOIN sessions s ON s.project_id = z.project_id' || session_values_join('stored')
      || ' WHERE z.rebuilt AND ' || rebuilt_projects_only('rollup_zones', 's', 'f'), '1', 'false', 'true');
  END IF;
  IF rebuild_all OR rezoned THEN
    ANALYZE rollup_values;
    EXECUTE format('INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(value_groups, 'hour');
    EXECUTE format('INSERT INTO session_day_rollups (project_id, day, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(value_groups, 'day');
  END IF;

  IF rebuild_all THEN
    PERFORM restore_indexes(set_aside);
  END IF;
  -- Fresh statistics when this run wrote a large share of the sessions and their pages (the first
  -- build, a bulk load), ahead of autovacuum: a table planned as nearly empty would be scanned once
  -- per session of the other.
  SELECT count(*) INTO pages_written FROM touched_pages;
  IF pages_written > 1000 AND pages_written > 0.1 * (SELECT reltuples FROM pg_class WHERE oid = 'session_pages'::regclass) THEN
    ANALYZE sessions;
    ANALYZE session_pages;
    ANALYZE session_names;
  END IF;
  IF rebuild_all THEN
    PERFORM free_temporary_tables(VARIADIC scratch_tables);
    -- A full build's copies of every session page and name: nothing after it reads them.
    TRUNCATE touched_pages, touched_names;
    RETURN;
  END IF;

  -- By difference: the touched sessions and their pages before this run, subtracted, and now,
  -- added, into the groups as they stand; the day rows of the projects rebuilt above are left out.
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  EXECUTE 'CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS ' || format(sessions_netted,
    format(sessions_of, 'touched_before s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '-1', 'true', 'NOT z.rebuilt')
    || ' UNION ALL ' || format(sessions_of, 'touched_after s'
      ' LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'NOT z.rebuilt'));
  ANALYZE rollup_sessions;
  PERFORM add_rollup_rows('session_rollups', ARRAY['project_id', 'hour', 'dimension', 'name', 'prefix'], session_sums,
    format(session_groups, 'hour'), true);
  PERFORM add_rollup_rows('session_day_rollups', ARRAY['project_id', 'day', 'dimension', 'name', 'prefix'], session_sums,
    format(session_groups, 'day'), true);
  EXECUTE 'CREATE TEMPORARY TABLE rollup_values ON COMMIT DROP AS ' || format(values_netted,
    format(values_of, 'touched_before s LEFT JOIN rollup_zones z ON z.project_id = s.project_id'
      || session_values_join('before'), '-1', 'true', 'NOT z.rebuilt')
    || ' UNION ALL ' || format(values_of, 'touched_after s LEFT JOIN rollup_zones z ON z.project_id = s.project_id'
      || session_values_join('after'), '1', 'true', 'NOT z.rebuilt'));
  ANALYZE rollup_values;
  PERFORM add_rollup_rows('session_rollups', ARRAY['project_id', 'hour', 'dimension', 'name', 'prefix'], session_sums,
    format(value_groups, 'hour'), true);
  PERFORM add_rollup_rows('session_day_rollups', ARRAY['project_id', 'day', 'dimension', 'name', 'prefix'], session_sums,
    format(value_groups, 'day'), true);
  EXECUTE 'CREATE TEMPORARY TABLE rollup_pages ON COMMIT DROP AS ' || format(pages_netted,
    format(pages_of, 'touched_pages_before p LEFT JOIN rollup_zones z ON z.project_id = p.project_id WHERE true', '-1', 'true', 'NOT z.rebuilt')
    || ' UNION ALL ' || format(pages_of, 'touched_pages p LEFT JOIN rollup_zones z ON z.project_id = p.project_id WHERE true', '1', 'true', 'NOT z.rebuilt'));
  ANALYZE rollup_pages;
  PERFORM add_rollup_rows('page_rollups', ARRAY['project_id', 'hour', 'origin', 'path', 'title'], page_sums,
    format(page_groups, 'hour'), true);
  PERFORM add_rollup_rows('page_day_rollups', ARRAY['project_id', 'day', 'origin', 'path', 'title'], page_sums,
    format(page_groups, 'day'), true);
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
-- replace_session_rows(target, rows_now, rows_before, rebuild_all): makes the rows of `target`
-- (session_pages or session_names: rows of one session each, carrying its project_id, session_id
-- and started_at) of the touched sessions what `rows_now` holds, given `rows_before`, what they
-- were (refresh_session_rollups, src/db/routines/refresh_session_rollups.sql). refresh_rollups
-- (src/db/routines/refresh_rollups.sql) calls it for both tables.
--
-- Rows that are the same are left in place: a session that only grew changed its last page and
-- added new ones, and deleting and writing all of a touched session's pages again took 3 s of a
-- run at 1,000 events/s. The stored rows are found through the session's start (`touched_before`),
-- which leads their indexes. On a full build (rebuild_all) the table has just been emptied and every
-- row is written.
--
-- The insert is two statements, not one with `rebuild_all OR NOT EXISTS`: under an OR the NOT
-- EXISTS stays a subplan run per row, a scan of the old rows for each new one (minutes at 1,000
-- events/s). Written in time order, a window's rows sit together: a one-day page list then reads
-- a ninetieth of a 90-day table's pages, not rows scattered over all of them (10M events:
-- 0.65 s -> 0.15 s). Later runs append recent sessions, which keeps the order.
CREATE OR REPLACE FUNCTION replace_session_rows(target regclass, rows_now regclass, rows_before regclass,
  rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  IF rebuild_all THEN
    EXECUTE format('INSERT INTO %s SELECT * FROM %s ORDER BY started_at', target, rows_now);
    RETURN;
  END IF;
  EXECUTE format('DELETE FROM %1$s r USING touched_before b'
    ' WHERE r.project_id = b.project_id AND r.started_at = b.started_at AND r.session_id = b.id'
    ' AND NOT EXISTS (SELECT 1 FROM %2$s t WHERE t.project_id = r.project_id AND t.session_id = r.session_id'
    ' AND ROW(t.*) IS NOT DISTINCT FROM ROW(r.*))', target, rows_now);
  EXECUTE format('INSERT INTO %1$s SELECT * FROM %2$s t'
    ' WHERE NOT EXISTS (SELECT 1 FROM %3$s b WHERE b.project_id = t.project_id AND b.session_id = t.session_id'
    ' AND ROW(b.*) IS NOT DISTINCT FROM ROW(t.*))'
    ' ORDER BY started_at', target, rows_now, rows_before);
END;
$fn$;
