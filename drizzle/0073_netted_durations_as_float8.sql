-- refresh_page_dimension_rollups(rebuild_all): the page aggregates per project day and dimension
-- value (page_dimension_rollups) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this after the session
-- pages are rewritten (refresh_rollups, src/db/routines/refresh_rollups.sql) and before it records
-- each project's timezone in rollup_timezones, with the temporary tables `touched_after`,
-- `touched_before` (their rows as they were before this run; none for new sessions),
-- `touched_pages_before` (their session pages as they were) and `touched_pages` (as they are).
--
-- A row holds the pages screened in the sessions of one day (the project's) with value `name` of
-- one dimension of session_dimensions() (src/db/routines/session_dimensions.sql), or with an event
-- on path `name` or named `name` (dimensions 'path' and 'name'), summed as the page rollups are: a session counts once per
-- page, with its screen views and time on page there.
-- `title` is part of the group: the greatest is taken when the rows are read, so the rows stay
-- sums. Like the pair rollups (src/db/routines/refresh_pair_rollups.sql), the rows are maintained
-- by difference (add_rollup_rows, src/db/routines/add_rollup_rows.sql): the pages of the touched
-- sessions as they were are subtracted and as they are added. A full build and a project whose
-- timezone changed (derived_zones, src/db/routines/derived_zones.sql) are built from all of
-- their sessions.
CREATE OR REPLACE FUNCTION refresh_page_dimension_rollups(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
-- As for the pair rollups: hash aggregates that hold every day's groups of a dimension at once.
SET work_mem = '256MB'
SET enable_sort = off
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['page_zones', 'dimension_pages', 'value_pages'];
  keys text[] := ARRAY['project_id', 'day', 'dimension', 'name', 'origin', 'path', 'title'];
  sums text[] := ARRAY['sessions', 'pageviews', 'bounces', 'duration_ms', 'timed_views'];
  value_dimension text;
  -- Screened pages of some sessions, narrow: their day, page, the session's values and the signed
  -- contributions to each sum. %1$s is the FROM clause that yields the pages as `p`, their
  -- sessions as `s` and their project's zone as `z`, %2$s the sign.
  pages_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' p.origin COLLATE "C" AS origin, p.path COLLATE "C" AS path, p.title COLLATE "C" AS title,'
    ' %2$s::integer AS sessions, %2$s * p.views AS pageviews, CASE WHEN s.is_bounce THEN %2$s ELSE 0 END AS bounces,'
    ' %2$s * p.duration_ms AS duration_ms, %2$s * p.timed_views AS timed_views'
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %1$s AND p.views > 0';
  -- Those rows summed per day, page and values: the page of a touched session that stayed in its
  -- day with the same values nets its old and new rows into one.
  netted text := 'SELECT project_id, day, origin, path, title, sum(sessions) AS sessions, sum(pageviews) AS pageviews,'
       ' sum(bounces) AS bounces, sum(duration_ms)::float8 AS duration_ms, sum(timed_views) AS timed_views'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM (%s) AS signed GROUP BY project_id, day, origin, path, title'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d);
  -- The sums of every dimension's (day, value, page, title) groups in dimension_pages.
  groups text := (SELECT string_agg(format('SELECT project_id, day, %1$L AS dimension, %1$I AS name, origin, path, title,'
      ' sum(sessions) AS sessions, sum(pageviews) AS pageviews, sum(bounces) AS bounces,'
      ' sum(duration_ms::float8) AS duration_ms, sum(timed_views) AS timed_views'
      ' FROM dimension_pages GROUP BY 1, 2, 4, 5, 6, 7', d.dimension), ' UNION ALL ')
    FROM session_dimensions() AS d);
  -- The same pages once per value of the session's multi-valued dimensions, each path and each
  -- event name (session_values_join, src/db/routines/session_values_join.sql): the rows of the
  -- 'path' and 'name' dimensions, the pages of the sessions with an event on that path or of that
  -- name. %1$s yields the pages as `p`, their sessions as `s`, those sessions' values as `f` and
  -- their project's zone as `z`, %2$s the sign.
  value_pages_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' f.dimension, f.value COLLATE "C" AS name, p.origin COLLATE "C" AS origin, p.path COLLATE "C" AS path, p.title COLLATE "C" AS title,'
    ' %2$s::integer AS sessions, %2$s * p.views AS pageviews, CASE WHEN s.is_bounce THEN %2$s ELSE 0 END AS bounces,'
    ' %2$s * p.duration_ms AS duration_ms, %2$s * p.timed_views AS timed_views FROM %1$s AND p.views > 0';
  value_pages_netted text := 'SELECT project_id, day, dimension, name, origin, path, title, sum(sessions) AS sessions,'
    ' sum(pageviews) AS pageviews, sum(bounces) AS bounces, sum(duration_ms)::float8 AS duration_ms,'
    ' sum(timed_views) AS timed_views FROM (%s) AS signed GROUP BY project_id, day, dimension, name, origin, path, title';
  value_groups text := 'SELECT project_id, day, dimension, name, origin, path, title,'
    ' sum(sessions) AS sessions, sum(pageviews) AS pageviews, sum(bounces) AS bounces,'
    ' sum(duration_ms::float8) AS duration_ms, sum(timed_views) AS timed_views FROM value_pages GROUP BY 1, 2, 3, 4, 5, 6, 7';
  -- On a full build, the statements that make the table's indexes again once it is written
  -- (set_aside_indexes, src/db/routines/set_aside_indexes.sql).
  set_aside text[] := '{}';
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  CREATE TEMPORARY TABLE page_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  IF rebuild_all THEN
    TRUNCATE page_dimension_rollups;
    set_aside := set_aside_indexes('page_dimension_rollups');
  ELSE
    EXECUTE 'DELETE FROM page_dimension_rollups r USING page_zones z WHERE r.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('page_zones', 'r');
  END IF;

  -- Built whole: every session of the projects rebuilt, into groups that no longer exist.
  EXECUTE 'CREATE TEMPORARY TABLE dimension_pages ON COMMIT DROP AS ' || format(pages_of,
    'page_zones z JOIN sessions s ON s.project_id = z.project_id'
    ' JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at AND p.session_id = s.id'
    ' WHERE z.rebuilt AND ' || rebuilt_projects_only('page_zones', 's', 'p'), '1');
  ANALYZE dimension_pages;
  IF EXISTS (SELECT 1 FROM dimension_pages) THEN
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, groups, false);
  END IF;
  PERFORM free_temporary_tables('dimension_pages');
  -- Only when some project is rebuilt: the distinct paths of the stored pages are made before the
  -- join, from the pages of the projects rebuilt (rebuilt_projects_only; from every page before
  -- it, 24 s at 10M events). A row per session page and each path or name of its
  -- session is the largest temporary table of a first build (749 MB at 1M events, twice the
  -- events' heap): built one dimension at a time, the paths' 554 MB and then the names' 194.
  -- The session's start and bounce are read from its page rows, which carry them: joined to
  -- `sessions`, the planner (which cannot tell how many paths a session has) probed the sessions'
  -- index once per row, 3.4 million times at 1M events (25.7 s for the paths against 10.4 s).
  IF EXISTS (SELECT 1 FROM page_zones WHERE rebuilt) THEN
    FOREACH value_dimension IN ARRAY ARRAY['path', 'name'] LOOP
      EXECUTE 'CREATE TEMPORARY TABLE value_pages ON COMMIT DROP AS ' || format(value_pages_of,
        'page_zones z JOIN session_pages p ON p.project_id = z.project_id'
        ' CROSS JOIN LATERAL (SELECT p.project_id, p.session_id AS id, p.started_at, p.is_bounce) AS s'
        || session_values_join('stored') || format(' WHERE z.rebuilt AND f.dimension = %L AND ', value_dimension)
        || rebuilt_projects_only('page_zones', 'p', 'f'), '1');
      ANALYZE value_pages;
      PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, value_groups, false);
      PERFORM free_temporary_tables('value_pages');
    END LOOP;
  END IF;
  IF rebuild_all THEN
    PERFORM free_temporary_tables(VARIADIC scratch_tables);
    PERFORM restore_indexes(set_aside);
    RETURN;
  END IF;

  -- By difference, for the others: the pages of the touched sessions as they were, subtracted,
  -- and as they are, added.
  EXECUTE 'CREATE TEMPORARY TABLE dimension_pages ON COMMIT DROP AS ' || format(netted, format(pages_of,
    'touched_before s JOIN page_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' JOIN touched_pages_before p ON p.project_id = s.project_id AND p.session_id = s.id WHERE true', '-1')
    || ' UNION ALL ' || format(pages_of,
    'touched_after s JOIN page_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' JOIN touched_pages p ON p.project_id = s.project_id AND p.session_id = s.id WHERE true', '1'));
  ANALYZE dimension_pages;
  IF EXISTS (SELECT 1 FROM dimension_pages) THEN
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, groups, true);
  END IF;
  EXECUTE 'CREATE TEMPORARY TABLE value_pages ON COMMIT DROP AS ' || format(value_pages_netted, format(value_pages_of,
    'touched_before s JOIN page_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' JOIN touched_pages_before p ON p.project_id = s.project_id AND p.session_id = s.id'
    || session_values_join('before') || ' WHERE true', '-1')
    || ' UNION ALL ' || format(value_pages_of,
    'touched_after s JOIN page_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' JOIN touched_pages p ON p.project_id = s.project_id AND p.session_id = s.id'
    || session_values_join('after') || ' WHERE true', '1'));
  ANALYZE value_pages;
  IF EXISTS (SELECT 1 FROM value_pages) THEN
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, value_groups, true);
  END IF;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
-- refresh_pair_rollups(rebuild_all): the session aggregates per project day and pair of breakdown
-- values (session_pair_rollups) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this after the other
-- routines per project day and before it records each project's timezone in rollup_timezones,
-- with the temporary tables `touched_after` (the sessions of this run as it wrote them) and `touched_before`
-- (their rows as they were before this run; none for new sessions).
--
-- A row holds the sessions of one day (the project's; UTC when it has none) with value `name` of
-- `dimension` and value `by_name` of `by_dimension`, for every unordered pair of the dimensions
-- of session_dimensions() (src/db/routines/session_dimensions.sql), the first one first; empty
-- strings and NULL alike are "not set" (NULL), and of the 'path' and 'name' dimensions (each path
-- the session's events carry, each event name it holds) with each of them. A filter on either dimension of a pair answers a
-- breakdown by the other from these rows.
--
-- Every column is a sum, so the rows are maintained by difference: the touched sessions as they
-- were before this run are subtracted, as they are now added, and a group left without sessions
-- is deleted. A run then costs in proportion to the sessions it touched, whatever a day holds
-- (rebuilding a day per run would not keep up with a busy project's ingest). A session that did
-- not change adds nothing. A full build (`rebuild_all`) and a project whose timezone changed
-- (derived_zones, src/db/routines/derived_zones.sql) are built from all of their sessions.
--
-- Each of the 153 pairs is one hash aggregate over a narrow temporary copy of the sessions, as
-- for the single dimensions in refresh_rollups (src/db/routines/refresh_rollups.sql).
CREATE OR REPLACE FUNCTION refresh_pair_rollups(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
-- The hash aggregates of a full build hold a pair's groups of every day at once; the planner
-- cannot estimate how few groups there are and would sort instead.
SET work_mem = '256MB'
SET enable_sort = off
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['pair_zones', 'pair_sessions', 'pair_values'];
  -- Some sessions, narrow: their day, signed contributions to each sum (%2$s is the sign) and
  -- values; %1$s is the FROM clause that yields them as `s` and their project's zone as `z`. The
  -- sums come before the 18 values, so each aggregate below decodes a row only up to the two
  -- values it groups by (as in refresh_rollups, src/db/routines/refresh_rollups.sql).
  sessions_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day'
    || ', ' || signed_session_sums('%2$s')
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %1$s';
  -- The same rows summed per day and values: a touched session whose day and values did not change
  -- nets its old and new rows into one, which halves what the 153 aggregates below read. Durations
  -- and revenue are netted into float8 (exact below 2^53), as the aggregates sum them: a bigint's
  -- sum is numeric, and its cast to float8 per row and aggregate cost more than the sum itself.
  netted text := 'SELECT project_id, day, sum(sessions) AS sessions, sum(bounces) AS bounces, sum(screen_views) AS screen_views,'
       ' sum(duration_ms)::float8 AS duration_ms, sum(timed_sessions) AS timed_sessions, sum(revenue)::float8 AS revenue'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM (%s) AS signed GROUP BY project_id, day'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d);
  keys text[] := ARRAY['project_id', 'day', 'dimension', 'name', 'prefix', 'by_dimension', 'by_name', 'by_prefix'];
  sums text[] := ARRAY['sessions', 'bounces', 'screen_views', 'duration_ms', 'timed_sessions', 'revenue'];
  -- The sums of every pair's (day, value, value) groups in pair_sessions.
  -- Durations and revenue are summed as float8, exact for every total below 2^53 (285,000 years of
  -- milliseconds), where a bigint sum keeps a 128-bit state per group: a full build takes 40 %
  -- less time.
  pairs text := (SELECT string_agg(format('SELECT project_id, day, %1$L AS dimension, %1$I AS name, %2$s AS prefix,'
      ' %3$L AS by_dimension, %3$I AS by_name, %4$s AS by_prefix, sum(sessions) AS sessions, sum(bounces) AS bounces,'
      ' sum(screen_views) AS screen_views, sum(duration_ms::float8) AS duration_ms, sum(timed_sessions) AS timed_sessions,'
      ' sum(revenue::float8) AS revenue FROM pair_sessions GROUP BY 1, 2, 4, 5, 7, 8',
      a.dimension, coalesce(quote_ident(a.prefix), 'NULL::text'), b.dimension, coalesce(quote_ident(b.prefix), 'NULL::text')),
      ' UNION ALL ')
    FROM session_dimensions() WITH ORDINALITY AS a(dimension, prefix, position)
    JOIN session_dimensions() WITH ORDINALITY AS b(dimension, prefix, position) ON a.position < b.position);
  -- The same sessions once per value of the multi-valued dimensions, each path and each event name
  -- (session_values_join, src/db/routines/session_values_join.sql), with each of their breakdown
  -- values: the rows of the 'path' and 'name' dimensions (first in the pair; they are not
  -- breakdowns), which answer breakdowns under a filter "sessions with an event on path …" or
  -- "… named …". %1$s also yields those values as `f`.
  values_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day'
    || ', ' || signed_session_sums('%2$s') || ', f.dimension, f.value COLLATE "C" AS value'
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %1$s';
  values_netted text := 'SELECT project_id, day, sum(sessions) AS sessions, sum(bounces) AS bounces, sum(screen_views) AS screen_views,'
       ' sum(duration_ms)::float8 AS duration_ms, sum(timed_sessions) AS timed_sessions, sum(revenue)::float8 AS revenue, dimension, value'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM (%s) AS signed GROUP BY project_id, day, dimension, value'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d);
  value_pairs text := (SELECT string_agg(format('SELECT project_id, day, dimension, value AS name, NULL::text AS prefix,'
      ' %1$L AS by_dimension, %1$I AS by_name, %2$s AS by_prefix, sum(sessions) AS sessions, sum(bounces) AS bounces,'
      ' sum(screen_views) AS screen_views, sum(duration_ms::float8) AS duration_ms, sum(timed_sessions) AS timed_sessions,'
      ' sum(revenue::float8) AS revenue FROM pair_values GROUP BY 1, 2, 3, 4, 7, 8',
      b.dimension, coalesce(quote_ident(b.prefix), 'NULL::text')), ' UNION ALL ')
    FROM session_dimensions() AS b);
  -- On a full build, the statements that make the table's indexes again once it is written
  -- (set_aside_indexes, src/db/routines/set_aside_indexes.sql).
  set_aside text[] := '{}';
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  CREATE TEMPORARY TABLE pair_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  IF rebuild_all THEN
    TRUNCATE session_pair_rollups;
    set_aside := set_aside_indexes('session_pair_rollups');
  ELSE
    EXECUTE 'DELETE FROM session_pair_rollups p USING pair_zones z WHERE p.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('pair_zones', 'p');
  END IF;

  -- Built whole: every session of the projects rebuilt, into groups that no longer exist.
  EXECUTE 'CREATE TEMPORARY TABLE pair_sessions ON COMMIT DROP AS '
    || format(sessions_of, 'pair_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt AND '
      || rebuilt_projects_only('pair_zones', 's'), '1');
  ANALYZE pair_sessions;
  IF EXISTS (SELECT 1 FROM pair_sessions) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, pairs, false);
  END IF;
  PERFORM free_temporary_tables('pair_sessions');
  -- Only when some project is rebuilt: the distinct paths of the stored pages are made before the
  -- join, from the pages of the projects rebuilt (rebuilt_projects_only; from every page before
  -- it, 24 s at 10M events).
  IF EXISTS (SELECT 1 FROM pair_zones WHERE rebuilt) THEN
    EXECUTE 'CREATE TEMPORARY TABLE pair_values ON COMMIT DROP AS ' || format(values_of,
      'pair_zones z JOIN sessions s ON s.project_id = z.project_id' || session_values_join('stored')
      || ' WHERE z.rebuilt AND ' || rebuilt_projects_only('pair_zones', 's', 'f'), '1');
    ANALYZE pair_values;
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, value_pairs, false);
    PERFORM free_temporary_tables('pair_values');
  END IF;
  IF rebuild_all THEN
    PERFORM free_temporary_tables(VARIADIC scratch_tables);
    PERFORM restore_indexes(set_aside);
    RETURN;
  END IF;

  -- By difference, for the others: the touched sessions before this run, subtracted, and now,
  -- added, into the groups as they stand (add_rollup_rows, src/db/routines/add_rollup_rows.sql).
  EXECUTE 'CREATE TEMPORARY TABLE pair_sessions ON COMMIT DROP AS ' || format(netted,
    format(sessions_of, 'touched_before s JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt', '-1')
    || ' UNION ALL ' || format(sessions_of, 'touched_after s'
      ' JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt', '1'));
  ANALYZE pair_sessions;
  IF EXISTS (SELECT 1 FROM pair_sessions) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, pairs, true);
  END IF;
  EXECUTE 'CREATE TEMPORARY TABLE pair_values ON COMMIT DROP AS ' || format(values_netted,
    format(values_of, 'touched_before s JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
      || session_values_join('before'), '-1')
    || ' UNION ALL ' || format(values_of, 'touched_after s JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
      || session_values_join('after'), '1'));
  ANALYZE pair_values;
  IF EXISTS (SELECT 1 FROM pair_values) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, value_pairs, true);
  END IF;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
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
  -- views, of every session on a full build and of the touched ones otherwise (their old pages
  -- deleted first: a session's pages carry its start, so they are found through it).
  IF NOT rebuild_all THEN
    DELETE FROM session_pages p USING touched_before b
    WHERE p.project_id = b.project_id AND p.started_at = b.started_at AND p.session_id = b.id;
  END IF;
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
  -- Written in time order, a window's rows sit together: a one-day page list then reads a
  -- ninetieth of a 90-day table's pages, not rows scattered over all of them (10M events:
  -- 0.65 s -> 0.15 s). Later runs append recent sessions, which keeps the order.
  INSERT INTO session_pages SELECT * FROM touched_pages ORDER BY started_at;
  ANALYZE touched_pages;
  -- Session names likewise: each event name of each session, its old ones deleted first.
  IF NOT rebuild_all THEN
    DELETE FROM session_names n USING touched_before b
    WHERE n.project_id = b.project_id AND n.started_at = b.started_at AND n.session_id = b.id;
  END IF;
  EXECUTE format($sql$
  INSERT INTO touched_names (project_id, session_id, started_at, name)
  SELECT DISTINCT s.project_id, s.id, s.started_at, e.name
  FROM %s
  JOIN events e ON e.project_id = s.project_id AND e.session_id = s.id
  $sql$, CASE WHEN rebuild_all THEN 'sessions s' ELSE 'touched_after s' END);
  INSERT INTO session_names SELECT * FROM touched_names ORDER BY started_at;
  ANALYZE touched_names;

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
