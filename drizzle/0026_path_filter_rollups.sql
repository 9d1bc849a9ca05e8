-- refresh_dimension_sketches(rebuild_all): the visitor sketches per day and dimension value
-- (visitor_dimension_sketches) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this after the day
-- rollups and before it records each project's timezone in rollup_timezones, with the temporary
-- tables `touched_after` (the sessions of this run as it wrote them) and `touched_before` (their rows as they
-- were before this run; none for new sessions).
--
-- A day is the project's own (its timezone, UTC when it has none); a session counts under the
-- value of each dimension of session_dimensions() (src/db/routines/session_dimensions.sql) it has,
-- empty strings and NULL alike as "not set" (name NULL), and under each path its events carry
-- (dimension 'path', no group for "not set").
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
  -- The same for the 'path' dimension, a session under each path its events carry: %s yields the
  -- sessions as `s` and their session pages as `f` (a path seen on two origins repeats an entry,
  -- which the distinct entries of a group absorb).
  paths_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' visitor_entry(s.profile_id) AS entry, f.path COLLATE "C" AS path FROM %s';
  path_groups text := ' UNION ALL SELECT project_id, day, ''path'' AS dimension, path AS name,'
    ' array_agg(DISTINCT entry ORDER BY entry) AS entries FROM dimension_paths GROUP BY 1, 2, 4';
  -- The session pages of `s` with a path, found through the session's start (an index).
  pages_of_session constant text := ' JOIN session_pages f ON f.project_id = s.project_id AND f.started_at = s.started_at'
    ' AND f.session_id = s.id AND f.path <> ''''';
BEGIN
  DROP TABLE IF EXISTS pg_temp.dimension_zones, pg_temp.dimension_days, pg_temp.dimension_sessions,
    pg_temp.dimension_paths, pg_temp.dimension_groups;
  -- Each project's zone, and whether all of its days are rebuilt (src/db/routines/derived_zones.sql).
  CREATE TEMPORARY TABLE dimension_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);

  -- The days of the other projects that lost a session or a value: before and now.
  EXECUTE format($sql$
  CREATE TEMPORARY TABLE dimension_days ON COMMIT DROP AS
  SELECT DISTINCT z.project_id, d.day
  FROM touched_before b
  JOIN touched_after s ON s.project_id = b.project_id AND s.id = b.id
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
  EXECUTE 'CREATE TEMPORARY TABLE dimension_paths ON COMMIT DROP AS ' || format(paths_of,
    'dimension_zones z JOIN sessions s ON s.project_id = z.project_id' || pages_of_session || ' WHERE z.rebuilt')
    || ' UNION ALL ' || format(paths_of, 'dimension_days d JOIN dimension_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day'
    ' AND s.started_at < ((d.day AT TIME ZONE z.timezone)::date + 1)::timestamp AT TIME ZONE z.timezone' || pages_of_session);
  EXECUTE format('CREATE TEMPORARY TABLE dimension_groups ON COMMIT DROP AS ' || groups_of || path_groups, 'dimension_sessions');
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, entries)
  SELECT project_id, day, dimension, name, 0, entries FROM dimension_groups WHERE cardinality(entries) <= sparse_limit;
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM dimension_groups g CROSS JOIN LATERAL entry_planes(g.entries) AS p WHERE cardinality(g.entries) > sparse_limit;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- Merged: the new sessions of the other days, and the paths of every touched session there (a
  -- session's paths only grow as its events arrive: a union adds the new ones).
  DROP TABLE dimension_sessions, dimension_paths, dimension_groups;
  EXECUTE format('CREATE TEMPORARY TABLE dimension_sessions ON COMMIT DROP AS ' || sessions_of,
    'touched_after s'
    ' JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' WHERE NOT EXISTS (SELECT 1 FROM touched_before b WHERE b.project_id = s.project_id AND b.id = s.id)'
    ' AND NOT EXISTS (SELECT 1 FROM dimension_days d WHERE d.project_id = s.project_id'
    ' AND d.day = date_trunc(''day'', s.started_at, z.timezone))');
  EXECUTE 'CREATE TEMPORARY TABLE dimension_paths ON COMMIT DROP AS ' || format(paths_of, 'touched_after s'
    ' JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' JOIN touched_pages f ON f.project_id = s.project_id AND f.session_id = s.id AND f.path <> '''''
    ' WHERE NOT EXISTS (SELECT 1 FROM dimension_days d WHERE d.project_id = s.project_id'
    ' AND d.day = date_trunc(''day'', s.started_at, z.timezone))');
  EXECUTE format('CREATE TEMPORARY TABLE dimension_groups ON COMMIT DROP AS ' || groups_of || path_groups, 'dimension_sessions');
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
    WHERE v.plane = 0 AND cardinality(v.entries) > sparse_limit AND (EXISTS (SELECT 1 FROM dimension_sessions s
      WHERE s.project_id = v.project_id AND s.day = v.day) OR EXISTS (SELECT 1 FROM dimension_paths s
      WHERE s.project_id = v.project_id AND s.day = v.day))
    RETURNING v.project_id, v.day, v.dimension, v.name, v.entries
  )
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM grown g CROSS JOIN LATERAL entry_planes(g.entries) AS p;
END;
$fn$;
--> statement-breakpoint
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
-- on path `name` (dimension 'path'), summed as the page rollups are: a session counts once per
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
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  keys text[] := ARRAY['project_id', 'day', 'dimension', 'name', 'origin', 'path', 'title'];
  sums text[] := ARRAY['sessions', 'pageviews', 'bounces', 'duration_ms', 'timed_views'];
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
       ' sum(bounces) AS bounces, sum(duration_ms) AS duration_ms, sum(timed_views) AS timed_views'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM (%s) AS signed GROUP BY project_id, day, origin, path, title'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d);
  -- The sums of every dimension's (day, value, page, title) groups in dimension_pages.
  groups text := (SELECT string_agg(format('SELECT project_id, day, %1$L AS dimension, %1$I AS name, origin, path, title,'
      ' sum(sessions) AS sessions, sum(pageviews) AS pageviews, sum(bounces) AS bounces,'
      ' sum(duration_ms::float8) AS duration_ms, sum(timed_views) AS timed_views'
      ' FROM dimension_pages GROUP BY 1, 2, 4, 5, 6, 7', d.dimension), ' UNION ALL ')
    FROM session_dimensions() AS d);
  -- The same pages once per path the session's events carry (session_path_join,
  -- src/db/routines/session_path_join.sql): the rows of the 'path' dimension, the pages of the
  -- sessions with an event on that path. %1$s yields the pages as `p`, their sessions as `s`,
  -- those sessions' paths as `f` and their project's zone as `z`, %2$s the sign.
  path_pages_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' f.path COLLATE "C" AS name, p.origin COLLATE "C" AS origin, p.path COLLATE "C" AS path, p.title COLLATE "C" AS title,'
    ' %2$s::integer AS sessions, %2$s * p.views AS pageviews, CASE WHEN s.is_bounce THEN %2$s ELSE 0 END AS bounces,'
    ' %2$s * p.duration_ms AS duration_ms, %2$s * p.timed_views AS timed_views FROM %1$s AND p.views > 0';
  path_pages_netted text := 'SELECT project_id, day, name, origin, path, title, sum(sessions) AS sessions,'
    ' sum(pageviews) AS pageviews, sum(bounces) AS bounces, sum(duration_ms) AS duration_ms,'
    ' sum(timed_views) AS timed_views FROM (%s) AS signed GROUP BY project_id, day, name, origin, path, title';
  path_groups text := 'SELECT project_id, day, ''path'' AS dimension, name, origin, path, title,'
    ' sum(sessions) AS sessions, sum(pageviews) AS pageviews, sum(bounces) AS bounces,'
    ' sum(duration_ms::float8) AS duration_ms, sum(timed_views) AS timed_views FROM path_pages GROUP BY 1, 2, 4, 5, 6, 7';
BEGIN
  DROP TABLE IF EXISTS pg_temp.page_zones, pg_temp.dimension_pages, pg_temp.path_pages;
  CREATE TEMPORARY TABLE page_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  IF rebuild_all THEN
    TRUNCATE page_dimension_rollups;
  ELSE
    DELETE FROM page_dimension_rollups r USING page_zones z WHERE r.project_id = z.project_id AND z.rebuilt;
  END IF;

  -- Built whole: every session of the projects rebuilt, into groups that no longer exist.
  EXECUTE 'CREATE TEMPORARY TABLE dimension_pages ON COMMIT DROP AS ' || format(pages_of,
    'page_zones z JOIN sessions s ON s.project_id = z.project_id'
    ' JOIN session_pages p ON p.project_id = s.project_id AND p.session_id = s.id WHERE z.rebuilt', '1');
  ANALYZE dimension_pages;
  IF EXISTS (SELECT 1 FROM dimension_pages) THEN
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, groups, false);
  END IF;
  EXECUTE 'CREATE TEMPORARY TABLE path_pages ON COMMIT DROP AS ' || format(path_pages_of,
    'page_zones z JOIN sessions s ON s.project_id = z.project_id'
    ' JOIN session_pages p ON p.project_id = s.project_id AND p.session_id = s.id'
    || session_path_join('session_pages') || ' WHERE z.rebuilt', '1');
  ANALYZE path_pages;
  IF EXISTS (SELECT 1 FROM path_pages) THEN
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, path_groups, false);
  END IF;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- By difference, for the others: the pages of the touched sessions as they were, subtracted,
  -- and as they are, added.
  DROP TABLE dimension_pages, path_pages;
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
  EXECUTE 'CREATE TEMPORARY TABLE path_pages ON COMMIT DROP AS ' || format(path_pages_netted, format(path_pages_of,
    'touched_before s JOIN page_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' JOIN touched_pages_before p ON p.project_id = s.project_id AND p.session_id = s.id'
    || session_path_join('touched_pages_before') || ' WHERE true', '-1')
    || ' UNION ALL ' || format(path_pages_of,
    'touched_after s JOIN page_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' JOIN touched_pages p ON p.project_id = s.project_id AND p.session_id = s.id'
    || session_path_join('touched_pages') || ' WHERE true', '1'));
  ANALYZE path_pages;
  IF EXISTS (SELECT 1 FROM path_pages) THEN
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, path_groups, true);
  END IF;
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
-- strings and NULL alike are "not set" (NULL), and of the 'path' dimension (each path the
-- session's events carry) with each of them. A filter on either dimension of a pair answers a
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
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  -- Some sessions, narrow: their day, signed contributions to each sum (%2$s is the sign) and
  -- values; %1$s is the FROM clause that yields them as `s` and their project's zone as `z`. The
  -- sums come before the 18 values, so each aggregate below decodes a row only up to the two
  -- values it groups by (as in refresh_rollups, src/db/routines/refresh_rollups.sql).
  sessions_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day'
    || ', ' || signed_session_sums('%2$s')
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %1$s';
  -- The same rows summed per day and values: a touched session whose day and values did not change
  -- nets its old and new rows into one, which halves what the 153 aggregates below read.
  netted text := 'SELECT project_id, day, sum(sessions) AS sessions, sum(bounces) AS bounces, sum(screen_views) AS screen_views,'
       ' sum(duration_ms) AS duration_ms, sum(timed_sessions) AS timed_sessions, sum(revenue) AS revenue'
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
  -- The same sessions once per path their events carry (session_path_join,
  -- src/db/routines/session_path_join.sql), paired with each of their values: the rows of the
  -- 'path' dimension (first in the pair; `path` is not a breakdown), which answer breakdowns under
  -- a filter "sessions with an event on path …". %1$s also yields the paths as `f`.
  paths_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day'
    || ', ' || signed_session_sums('%2$s') || ', f.path COLLATE "C" AS path'
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %1$s';
  paths_netted text := 'SELECT project_id, day, sum(sessions) AS sessions, sum(bounces) AS bounces, sum(screen_views) AS screen_views,'
       ' sum(duration_ms) AS duration_ms, sum(timed_sessions) AS timed_sessions, sum(revenue) AS revenue, path'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM (%s) AS signed GROUP BY project_id, day, path'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d);
  path_pairs text := (SELECT string_agg(format('SELECT project_id, day, ''path'' AS dimension, path AS name, NULL::text AS prefix,'
      ' %1$L AS by_dimension, %1$I AS by_name, %2$s AS by_prefix, sum(sessions) AS sessions, sum(bounces) AS bounces,'
      ' sum(screen_views) AS screen_views, sum(duration_ms::float8) AS duration_ms, sum(timed_sessions) AS timed_sessions,'
      ' sum(revenue::float8) AS revenue FROM pair_paths GROUP BY 1, 2, 4, 7, 8',
      b.dimension, coalesce(quote_ident(b.prefix), 'NULL::text')), ' UNION ALL ')
    FROM session_dimensions() AS b);
BEGIN
  DROP TABLE IF EXISTS pg_temp.pair_zones, pg_temp.pair_sessions, pg_temp.pair_paths;
  CREATE TEMPORARY TABLE pair_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  IF rebuild_all THEN
    TRUNCATE session_pair_rollups;
  ELSE
    DELETE FROM session_pair_rollups p USING pair_zones z WHERE p.project_id = z.project_id AND z.rebuilt;
  END IF;

  -- Built whole: every session of the projects rebuilt, into groups that no longer exist.
  EXECUTE 'CREATE TEMPORARY TABLE pair_sessions ON COMMIT DROP AS '
    || format(sessions_of, 'pair_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt', '1');
  ANALYZE pair_sessions;
  IF EXISTS (SELECT 1 FROM pair_sessions) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, pairs, false);
  END IF;
  DROP TABLE pair_sessions;
  EXECUTE 'CREATE TEMPORARY TABLE pair_paths ON COMMIT DROP AS ' || format(paths_of,
    'pair_zones z JOIN sessions s ON s.project_id = z.project_id' || session_path_join('session_pages') || ' WHERE z.rebuilt', '1');
  ANALYZE pair_paths;
  IF EXISTS (SELECT 1 FROM pair_paths) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, path_pairs, false);
  END IF;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- By difference, for the others: the touched sessions before this run, subtracted, and now,
  -- added, into the groups as they stand (add_rollup_rows, src/db/routines/add_rollup_rows.sql).
  DROP TABLE pair_paths;
  EXECUTE 'CREATE TEMPORARY TABLE pair_sessions ON COMMIT DROP AS ' || format(netted,
    format(sessions_of, 'touched_before s JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt', '-1')
    || ' UNION ALL ' || format(sessions_of, 'touched_after s'
      ' JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt', '1'));
  ANALYZE pair_sessions;
  IF EXISTS (SELECT 1 FROM pair_sessions) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, pairs, true);
  END IF;
  EXECUTE 'CREATE TEMPORARY TABLE pair_paths ON COMMIT DROP AS ' || format(paths_netted,
    format(paths_of, 'touched_before s JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
      || session_path_join('touched_pages_before'), '-1')
    || ' UNION ALL ' || format(paths_of, 'touched_after s JOIN pair_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
      || session_path_join('touched_pages'), '1'));
  ANALYZE pair_paths;
  IF EXISTS (SELECT 1 FROM pair_paths) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, path_pairs, true);
  END IF;
END;
$fn$;
--> statement-breakpoint
-- refresh_rollups(rebuild_all): the session and page rollups per hour and per project day
-- (session_rollups, session_day_rollups, page_rollups, page_day_rollups) and the session pages
-- (session_pages) of the sessions refresh_session_rollups (src/db/routines/refresh_session_rollups.sql)
-- has just derived. It calls this first after writing the sessions, with the temporary tables
-- `touched_after` (the sessions of this run as it wrote them), `touched_before` (their rows as they were before
-- this run; none for new sessions) and `touched_pages_before` (their session pages as they were),
-- and leaves `touched_pages` (their session pages as they are now) to the routines after it.
--
-- An hour is the UTC hour of a session's start, a day the project's (its timezone, UTC when it
-- has none). A session counts in the '' dimension (all sessions) and under its value of each
-- dimension of session_dimensions() (src/db/routines/session_dimensions.sql), empty strings and
-- NULL alike as "not set", and under each path its events carry (dimension 'path', no row for
-- "not set"); a page row counts a session once per (origin, path, title) it screened.
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
       ' sum(screen_views) AS screen_views, sum(duration_ms) AS duration_ms, sum(timed_sessions) AS timed_sessions,'
       ' sum(revenue) AS revenue'
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
  -- The same sessions once per path their events carry (session_path_join,
  -- src/db/routines/session_path_join.sql): %1$s yields them as `s`, their paths as `f` and their
  -- zone as `z`. They make the rows of the 'path' dimension, which answer "sessions with an event
  -- on path …" as the other dimensions' rows answer a filter on them.
  paths_of text := 'SELECT s.project_id COLLATE "C" AS project_id,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', s.started_at, z.timezone) END AS day'
    || ', ' || signed_session_sums('%2$s') || ', f.path COLLATE "C" AS path FROM %1$s';
  paths_netted text := 'SELECT project_id, hour, day, path, sum(sessions) AS sessions, sum(bounces) AS bounces,'
    ' sum(screen_views) AS screen_views, sum(duration_ms) AS duration_ms, sum(timed_sessions) AS timed_sessions,'
    ' sum(revenue) AS revenue FROM (%s) AS signed GROUP BY project_id, hour, day, path';
  path_groups text := format('SELECT project_id, %%1$I, ''path'' AS dimension, path AS name, NULL::text AS prefix, %s'
    ' FROM rollup_paths WHERE %%1$I IS NOT NULL GROUP BY 1, 2, 4', session_aggregates);
  -- Screened pages, narrow, signed like the sessions: %1$s yields them as `p` with their
  -- project's zone as `z`.
  pages_of text := 'SELECT p.project_id COLLATE "C" AS project_id,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', p.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', p.started_at, z.timezone) END AS day,'
    ' p.origin COLLATE "C" AS origin, p.path COLLATE "C" AS path, p.title COLLATE "C" AS title,'
    ' %2$s::integer AS sessions, %2$s * p.views AS pageviews, CASE WHEN p.is_bounce THEN %2$s ELSE 0 END AS bounces,'
    ' %2$s * p.duration_ms AS duration_ms, %2$s * p.timed_views AS timed_views FROM %1$s AND p.views > 0';
  pages_netted text := 'SELECT project_id, hour, day, origin, path, title, sum(sessions) AS sessions,'
    ' sum(pageviews) AS pageviews, sum(bounces) AS bounces, sum(duration_ms) AS duration_ms, sum(timed_views) AS timed_views'
    ' FROM (%s) AS signed GROUP BY project_id, hour, day, origin, path, title';
  page_groups text := 'SELECT project_id, %1$I, origin, path, title, sum(sessions) AS sessions, sum(pageviews) AS pageviews,'
    ' sum(bounces) AS bounces, sum(duration_ms::float8) AS duration_ms, sum(timed_views) AS timed_views'
    ' FROM rollup_pages WHERE %1$I IS NOT NULL GROUP BY 1, 2, 3, 4, 5';
  page_indexes text[];
  page_index_names text[];
  page_index text;
  pages_written bigint;
  rezoned boolean;
BEGIN
  DROP TABLE IF EXISTS pg_temp.rollup_zones, pg_temp.rollup_sessions, pg_temp.rollup_pages, pg_temp.rollup_paths,
    pg_temp.touched_pages;
  CREATE TEMPORARY TABLE rollup_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  -- Whether some project's day rows are rebuilt whole in this incremental run (its timezone changed).
  rezoned := NOT rebuild_all AND EXISTS (SELECT 1 FROM rollup_zones WHERE rollup_zones.rebuilt);
  CREATE TEMPORARY TABLE touched_pages ON COMMIT DROP AS SELECT * FROM session_pages WITH NO DATA;

  IF rebuild_all THEN
    TRUNCATE session_rollups, session_day_rollups, page_rollups, page_day_rollups, session_pages;
    -- Every session page is written: building their indexes afterwards, from their definitions as
    -- they stand, is several times cheaper than maintaining them row by row.
    SELECT array_agg(pg_get_indexdef(indexrelid)), array_agg(indexrelid::regclass::text)
    INTO page_indexes, page_index_names
    FROM pg_index WHERE indrelid = 'session_pages'::regclass;
    IF page_index_names IS NOT NULL THEN
      EXECUTE (SELECT 'DROP INDEX ' || string_agg(name, ', ') FROM unnest(page_index_names) AS name);
    END IF;
    EXECUTE 'CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS '
      || format(sessions_of, 'sessions s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'true');
  ELSIF rezoned THEN
    -- Projects whose timezone changed: their day rows, built again from all of their sessions.
    DELETE FROM session_day_rollups r USING rollup_zones z WHERE r.project_id = z.project_id AND z.rebuilt;
    DELETE FROM page_day_rollups r USING rollup_zones z WHERE r.project_id = z.project_id AND z.rebuilt;
    EXECUTE 'CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS '
      || format(sessions_of, 'rollup_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt', '1', 'false', 'true');
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

  IF rebuild_all THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_pages ON COMMIT DROP AS '
      || format(pages_of, 'touched_pages p LEFT JOIN rollup_zones z ON z.project_id = p.project_id WHERE true', '1', 'true', 'true');
  ELSIF rezoned THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_pages ON COMMIT DROP AS '
      || format(pages_of, 'rollup_zones z JOIN session_pages p ON p.project_id = z.project_id WHERE z.rebuilt', '1', 'false', 'true');
  END IF;
  IF rebuild_all OR rezoned THEN
    ANALYZE rollup_pages;
    EXECUTE format('INSERT INTO page_rollups (project_id, hour, origin, path, title, %s) ', array_to_string(page_sums, ', '))
      || format(page_groups, 'hour');
    EXECUTE format('INSERT INTO page_day_rollups (project_id, day, origin, path, title, %s) ', array_to_string(page_sums, ', '))
      || format(page_groups, 'day');
  END IF;

  -- The 'path' dimension of the session rollups, from the session pages just written.
  IF rebuild_all THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_paths ON COMMIT DROP AS ' || format(paths_of,
      'sessions s LEFT JOIN rollup_zones z ON z.project_id = s.project_id' || session_path_join('touched_pages'),
      '1', 'true', 'true');
  ELSIF rezoned THEN
    EXECUTE 'CREATE TEMPORARY TABLE rollup_paths ON COMMIT DROP AS ' || format(paths_of,
      'rollup_zones z JOIN sessions s ON s.project_id = z.project_id' || session_path_join('session_pages')
      || ' WHERE z.rebuilt', '1', 'false', 'true');
  END IF;
  IF rebuild_all OR rezoned THEN
    ANALYZE rollup_paths;
    EXECUTE format('INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(path_groups, 'hour');
    EXECUTE format('INSERT INTO session_day_rollups (project_id, day, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(path_groups, 'day');
  END IF;

  IF rebuild_all THEN
    FOREACH page_index IN ARRAY coalesce(page_indexes, '{}') LOOP
      EXECUTE page_index;
    END LOOP;
  END IF;
  -- Fresh statistics when this run wrote a large share of the sessions and their pages (the first
  -- build, a bulk load), ahead of autovacuum: a table planned as nearly empty would be scanned once
  -- per session of the other.
  SELECT count(*) INTO pages_written FROM touched_pages;
  IF pages_written > 1000 AND pages_written > 0.1 * (SELECT reltuples FROM pg_class WHERE oid = 'session_pages'::regclass) THEN
    ANALYZE sessions;
    ANALYZE session_pages;
  END IF;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- By difference: the touched sessions and their pages before this run, subtracted, and now,
  -- added, into the groups as they stand; the day rows of the projects rebuilt above are left out.
  DROP TABLE IF EXISTS rollup_sessions, rollup_pages, rollup_paths;
  EXECUTE 'CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS ' || format(sessions_netted,
    format(sessions_of, 'touched_before s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '-1', 'true', 'NOT z.rebuilt')
    || ' UNION ALL ' || format(sessions_of, 'touched_after s'
      ' LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'NOT z.rebuilt'));
  ANALYZE rollup_sessions;
  PERFORM add_rollup_rows('session_rollups', ARRAY['project_id', 'hour', 'dimension', 'name', 'prefix'], session_sums,
    format(session_groups, 'hour'), true);
  PERFORM add_rollup_rows('session_day_rollups', ARRAY['project_id', 'day', 'dimension', 'name', 'prefix'], session_sums,
    format(session_groups, 'day'), true);
  EXECUTE 'CREATE TEMPORARY TABLE rollup_paths ON COMMIT DROP AS ' || format(paths_netted,
    format(paths_of, 'touched_before s LEFT JOIN rollup_zones z ON z.project_id = s.project_id'
      || session_path_join('touched_pages_before'), '-1', 'true', 'NOT z.rebuilt')
    || ' UNION ALL ' || format(paths_of, 'touched_after s LEFT JOIN rollup_zones z ON z.project_id = s.project_id'
      || session_path_join('touched_pages'), '1', 'true', 'NOT z.rebuilt'));
  ANALYZE rollup_paths;
  PERFORM add_rollup_rows('session_rollups', ARRAY['project_id', 'hour', 'dimension', 'name', 'prefix'], session_sums,
    format(path_groups, 'hour'), true);
  PERFORM add_rollup_rows('session_day_rollups', ARRAY['project_id', 'day', 'dimension', 'name', 'prefix'], session_sums,
    format(path_groups, 'day'), true);
  EXECUTE 'CREATE TEMPORARY TABLE rollup_pages ON COMMIT DROP AS ' || format(pages_netted,
    format(pages_of, 'touched_pages_before p LEFT JOIN rollup_zones z ON z.project_id = p.project_id WHERE true', '-1', 'true', 'NOT z.rebuilt')
    || ' UNION ALL ' || format(pages_of, 'touched_pages p LEFT JOIN rollup_zones z ON z.project_id = p.project_id WHERE true', '1', 'true', 'NOT z.rebuilt'));
  ANALYZE rollup_pages;
  PERFORM add_rollup_rows('page_rollups', ARRAY['project_id', 'hour', 'origin', 'path', 'title'], page_sums,
    format(page_groups, 'hour'), true);
  PERFORM add_rollup_rows('page_day_rollups', ARRAY['project_id', 'day', 'origin', 'path', 'title'], page_sums,
    format(page_groups, 'day'), true);
END;
$fn$;
--> statement-breakpoint
-- session_path_join(pages): a JOIN clause that pairs each session `s` of a query with every path
-- (not empty) that its rows in a table of session pages carry, once each, as `f.path`. `pages`
-- is session_pages or a temporary copy of some of its rows (touched_pages, touched_pages_before).
-- A session has a page row per (origin, path), so a path seen on two origins would otherwise
-- count the session twice. These are the rows of the 'path' dimension, which answer a filter
-- "sessions with an event on path …" (a multi-valued dimension: a session counts under each of its
-- paths), built by refresh_rollups, refresh_pair_rollups and refresh_page_dimension_rollups
-- (src/db/routines/). refresh_dimension_sketches joins the pages themselves: a sketch absorbs a
-- repeated visitor.
CREATE OR REPLACE FUNCTION session_path_join(pages text) RETURNS text
LANGUAGE sql
IMMUTABLE
AS $fn$
  SELECT format(' JOIN (SELECT DISTINCT project_id, session_id, path FROM %I WHERE path <> '''') AS f'
    ' ON f.project_id = s.project_id AND f.session_id = s.id', pages)
$fn$;
--> statement-breakpoint
-- The rollups gain the rows of the 'path' dimension: the next refresh builds them whole.
UPDATE derived_state SET processed_xid = 0 WHERE name = 'rollups';
