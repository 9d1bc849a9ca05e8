-- refresh_dimension_sketches(rebuild_all): the visitor sketches per day and dimension value
-- (visitor_dimension_sketches) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this after the day
-- rollups and before it records each project's timezone in rollup_timezones, with the temporary
-- tables `touched_after` (the sessions of this run as it wrote them) and `touched_before` (their rows as they
-- were before this run; none for new sessions).
--
-- A day is the project's own (its timezone, UTC when it has none); a session counts under the
-- value of each dimension of session_dimensions() (src/db/routines/session_dimensions.sql) it has,
-- empty strings and NULL alike as "not set" (name NULL), and under each path its events carry and
-- each event name it holds (dimensions 'path' and 'name', no group for "not set").
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
  -- The same for the multi-valued dimensions, a session under each path its events carry ('path')
  -- and each event name it holds ('name'): %s yields the sessions as `s` and those values as `f`
  -- (a path seen on two origins repeats an entry, which the distinct entries of a group absorb).
  values_of text := 'SELECT s.project_id COLLATE "C" AS project_id, date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' visitor_entry(s.profile_id) AS entry, f.dimension, f.value COLLATE "C" AS value FROM %s';
  value_groups text := ' UNION ALL SELECT project_id, day, dimension, value AS name,'
    ' array_agg(DISTINCT entry ORDER BY entry) AS entries FROM dimension_values GROUP BY 1, 2, 3, 4';
  -- The paths and names of `s` as %s (session_pages and session_names, or this run's copies)
  -- hold them, found through the session's start (an index of the stored ones).
  values_join constant text := ' JOIN (SELECT project_id, session_id, started_at, ''path'' AS dimension, path AS value'
    ' FROM %1$I WHERE path <> '''' UNION ALL SELECT project_id, session_id, started_at, ''name'', name FROM %2$I) AS f'
    ' ON f.project_id = s.project_id AND f.started_at = s.started_at AND f.session_id = s.id';
  stored_values constant text := format(values_join, 'session_pages', 'session_names');
BEGIN
  DROP TABLE IF EXISTS pg_temp.dimension_zones, pg_temp.dimension_days, pg_temp.dimension_sessions,
    pg_temp.dimension_values, pg_temp.dimension_groups;
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
  EXECUTE 'CREATE TEMPORARY TABLE dimension_values ON COMMIT DROP AS ' || format(values_of,
    'dimension_zones z JOIN sessions s ON s.project_id = z.project_id' || stored_values || ' WHERE z.rebuilt')
    || ' UNION ALL ' || format(values_of, 'dimension_days d JOIN dimension_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day'
    ' AND s.started_at < ((d.day AT TIME ZONE z.timezone)::date + 1)::timestamp AT TIME ZONE z.timezone' || stored_values);
  EXECUTE format('CREATE TEMPORARY TABLE dimension_groups ON COMMIT DROP AS ' || groups_of || value_groups, 'dimension_sessions');
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, entries)
  SELECT project_id, day, dimension, name, 0, entries FROM dimension_groups WHERE cardinality(entries) <= sparse_limit;
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM dimension_groups g CROSS JOIN LATERAL entry_planes(g.entries) AS p WHERE cardinality(g.entries) > sparse_limit;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- Merged: the new sessions of the other days, and the paths and names of every touched session
  -- there (a session's paths and names only grow as its events arrive: a union adds the new ones).
  DROP TABLE dimension_sessions, dimension_values, dimension_groups;
  EXECUTE format('CREATE TEMPORARY TABLE dimension_sessions ON COMMIT DROP AS ' || sessions_of,
    'touched_after s'
    ' JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    ' WHERE NOT EXISTS (SELECT 1 FROM touched_before b WHERE b.project_id = s.project_id AND b.id = s.id)'
    ' AND NOT EXISTS (SELECT 1 FROM dimension_days d WHERE d.project_id = s.project_id'
    ' AND d.day = date_trunc(''day'', s.started_at, z.timezone))');
  EXECUTE 'CREATE TEMPORARY TABLE dimension_values ON COMMIT DROP AS ' || format(values_of, 'touched_after s'
    ' JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
    || format(values_join, 'touched_pages', 'touched_names') ||
    ' WHERE NOT EXISTS (SELECT 1 FROM dimension_days d WHERE d.project_id = s.project_id'
    ' AND d.day = date_trunc(''day'', s.started_at, z.timezone))');
  EXECUTE format('CREATE TEMPORARY TABLE dimension_groups ON COMMIT DROP AS ' || groups_of || value_groups, 'dimension_sessions');
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
      WHERE s.project_id = v.project_id AND s.day = v.day) OR EXISTS (SELECT 1 FROM dimension_values s
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
    ' sum(pageviews) AS pageviews, sum(bounces) AS bounces, sum(duration_ms) AS duration_ms,'
    ' sum(timed_views) AS timed_views FROM (%s) AS signed GROUP BY project_id, day, dimension, name, origin, path, title';
  value_groups text := 'SELECT project_id, day, dimension, name, origin, path, title,'
    ' sum(sessions) AS sessions, sum(pageviews) AS pageviews, sum(bounces) AS bounces,'
    ' sum(duration_ms::float8) AS duration_ms, sum(timed_views) AS timed_views FROM value_pages GROUP BY 1, 2, 3, 4, 5, 6, 7';
BEGIN
  DROP TABLE IF EXISTS pg_temp.page_zones, pg_temp.dimension_pages, pg_temp.value_pages;
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
  EXECUTE 'CREATE TEMPORARY TABLE value_pages ON COMMIT DROP AS ' || format(value_pages_of,
    'page_zones z JOIN sessions s ON s.project_id = z.project_id'
    ' JOIN session_pages p ON p.project_id = s.project_id AND p.session_id = s.id'
    || session_values_join('stored') || ' WHERE z.rebuilt', '1');
  ANALYZE value_pages;
  IF EXISTS (SELECT 1 FROM value_pages) THEN
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, value_groups, false);
  END IF;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- By difference, for the others: the pages of the touched sessions as they were, subtracted,
  -- and as they are, added.
  DROP TABLE dimension_pages, value_pages;
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
       ' sum(duration_ms) AS duration_ms, sum(timed_sessions) AS timed_sessions, sum(revenue) AS revenue, dimension, value'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM (%s) AS signed GROUP BY project_id, day, dimension, value'
    || (SELECT string_agg(format(', %I', d.dimension), '') FROM session_dimensions() AS d);
  value_pairs text := (SELECT string_agg(format('SELECT project_id, day, dimension, value AS name, NULL::text AS prefix,'
      ' %1$L AS by_dimension, %1$I AS by_name, %2$s AS by_prefix, sum(sessions) AS sessions, sum(bounces) AS bounces,'
      ' sum(screen_views) AS screen_views, sum(duration_ms::float8) AS duration_ms, sum(timed_sessions) AS timed_sessions,'
      ' sum(revenue::float8) AS revenue FROM pair_values GROUP BY 1, 2, 3, 4, 7, 8',
      b.dimension, coalesce(quote_ident(b.prefix), 'NULL::text')), ' UNION ALL ')
    FROM session_dimensions() AS b);
BEGIN
  DROP TABLE IF EXISTS pg_temp.pair_zones, pg_temp.pair_sessions, pg_temp.pair_values;
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
  EXECUTE 'CREATE TEMPORARY TABLE pair_values ON COMMIT DROP AS ' || format(values_of,
    'pair_zones z JOIN sessions s ON s.project_id = z.project_id' || session_values_join('stored') || ' WHERE z.rebuilt', '1');
  ANALYZE pair_values;
  IF EXISTS (SELECT 1 FROM pair_values) THEN
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, value_pairs, false);
  END IF;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- By difference, for the others: the touched sessions before this run, subtracted, and now,
  -- added, into the groups as they stand (add_rollup_rows, src/db/routines/add_rollup_rows.sql).
  DROP TABLE pair_values;
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
  -- The same sessions once per value of the multi-valued dimensions, each path and each event name
  -- (session_values_join, src/db/routines/session_values_join.sql): %1$s yields them as `s`, those
  -- values as `f` and their zone as `z`. They make the rows of the 'path' and 'name' dimensions,
  -- which answer "sessions with an event on path …" as the other dimensions' rows answer a filter.
  values_of text := 'SELECT s.project_id COLLATE "C" AS project_id,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', s.started_at, z.timezone) END AS day'
    || ', ' || signed_session_sums('%2$s') || ', f.dimension, f.value COLLATE "C" AS value FROM %1$s';
  values_netted text := 'SELECT project_id, hour, day, dimension, value, sum(sessions) AS sessions, sum(bounces) AS bounces,'
    ' sum(screen_views) AS screen_views, sum(duration_ms) AS duration_ms, sum(timed_sessions) AS timed_sessions,'
    ' sum(revenue) AS revenue FROM (%s) AS signed GROUP BY project_id, hour, day, dimension, value';
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
  DROP TABLE IF EXISTS pg_temp.rollup_zones, pg_temp.rollup_sessions, pg_temp.rollup_pages, pg_temp.rollup_values,
    pg_temp.touched_pages, pg_temp.touched_names;
  CREATE TEMPORARY TABLE rollup_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  -- Whether some project's day rows are rebuilt whole in this incremental run (its timezone changed).
  rezoned := NOT rebuild_all AND EXISTS (SELECT 1 FROM rollup_zones WHERE rollup_zones.rebuilt);
  CREATE TEMPORARY TABLE touched_pages ON COMMIT DROP AS SELECT * FROM session_pages WITH NO DATA;
  CREATE TEMPORARY TABLE touched_names ON COMMIT DROP AS SELECT * FROM session_names WITH NO DATA;

  IF rebuild_all THEN
    TRUNCATE session_rollups, session_day_rollups, page_rollups, page_day_rollups, session_pages, session_names;
    -- Every session page and name is written: building their indexes afterwards, from their
    -- definitions as they stand, is several times cheaper than maintaining them row by row.
    SELECT array_agg(pg_get_indexdef(indexrelid)), array_agg(indexrelid::regclass::text)
    INTO page_indexes, page_index_names
    FROM pg_index WHERE indrelid IN ('session_pages'::regclass, 'session_names'::regclass);
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
      || format(pages_of, 'rollup_zones z JOIN session_pages p ON p.project_id = z.project_id WHERE z.rebuilt', '1', 'false', 'true');
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
      || ' WHERE z.rebuilt', '1', 'false', 'true');
  END IF;
  IF rebuild_all OR rezoned THEN
    ANALYZE rollup_values;
    EXECUTE format('INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(value_groups, 'hour');
    EXECUTE format('INSERT INTO session_day_rollups (project_id, day, dimension, name, prefix, %s) ',
      array_to_string(session_sums, ', ')) || format(value_groups, 'day');
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
    ANALYZE session_names;
  END IF;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- By difference: the touched sessions and their pages before this run, subtracted, and now,
  -- added, into the groups as they stand; the day rows of the projects rebuilt above are left out.
  DROP TABLE IF EXISTS rollup_sessions, rollup_pages, rollup_values;
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
END;
$fn$;
--> statement-breakpoint
-- refresh_session_rollups(): the session family of the derived tables. It derives `sessions`, one
-- row per (project_id, session_id), from the events, and then, in the same transaction, the
-- session and page rollups per hour and day with the session pages (refresh_rollups,
-- src/db/routines/refresh_rollups.sql), the visitor sketches per hour and day
-- (refresh_visitor_sketches, src/db/routines/refresh_visitor_sketches.sql) and per day and
-- dimension value (refresh_dimension_sketches, src/db/routines/refresh_dimension_sketches.sql),
-- the session aggregates per day and pair of dimension values (refresh_pair_rollups,
-- src/db/routines/refresh_pair_rollups.sql) and the page aggregates per day and dimension value
-- (refresh_page_dimension_rollups, src/db/routines/refresh_page_dimension_rollups.sql), so both
-- query paths always see the same data. It returns the number of sessions it wrote.
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
-- The touched sessions are kept in a temporary table, and their rows and pages as they were before
-- this run in two others, so that the routines after the upsert can subtract what they were and add
-- what they are (the sketches: merge or rebuild). The first run, and any run after the 'rollups'
-- watermark was reset to 0 (by a migration that adds or reshapes a derived table), build every
-- derived table whole. A project whose timezone is new or changed gets all of its days rebuilt.
CREATE OR REPLACE FUNCTION refresh_session_rollups() RETURNS integer
LANGUAGE plpgsql
-- A bulk load sorts every new event once; give that sort room instead of spilling to disk.
SET work_mem = '256MB'
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
-- A run reaches the touched sessions' events, rows and pages by index, the newest rows of their
-- tables and cached. At the default cost of a random read (4) the planner judged a scan of all
-- 10M events and 8M session pages cheaper than 27,000 index lookups and took seconds
-- (10M events at 1,000 events/s: 40 s a run -> 31 s); every routine below runs with this too.
SET random_page_cost = 1.1
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  rollups_xid bigint;
  -- Taken before anything else: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  rebuild_all boolean;
BEGIN
  -- One run at a time: a concurrent caller waits here, then finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
  INSERT INTO derived_state (name) VALUES ('sessions'), ('rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'sessions';
  SELECT processed_xid INTO rollups_xid FROM derived_state WHERE name = 'rollups';

  rebuild_all := from_xid = 0 OR rollups_xid = 0;

  DROP TABLE IF EXISTS pg_temp.touched_sessions, pg_temp.touched_before, pg_temp.touched_after, pg_temp.touched_pages_before,
    pg_temp.touched_names_before;
  CREATE TEMPORARY TABLE touched_sessions (project_id text, session_id text) ON COMMIT DROP;
  -- The touched sessions as they were before this run (none for new ones), their pages and names.
  CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  -- ...and as this run writes them (filled by the upsert below).
  CREATE TEMPORARY TABLE touched_after ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  CREATE TEMPORARY TABLE touched_pages_before ON COMMIT DROP AS SELECT * FROM session_pages WITH NO DATA;
  CREATE TEMPORARY TABLE touched_names_before ON COMMIT DROP AS SELECT * FROM session_names WITH NO DATA;
  IF from_xid > 0 THEN
    INSERT INTO touched_sessions SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid;
    ANALYZE touched_sessions;
    INSERT INTO touched_before SELECT s.*
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    ANALYZE touched_before;
    -- A session's pages carry its start: found through it, by the (project_id, started_at) index.
    INSERT INTO touched_pages_before SELECT p.*
    FROM touched_before b JOIN session_pages p ON p.project_id = b.project_id AND p.started_at = b.started_at AND p.session_id = b.id;
    ANALYZE touched_pages_before;
    INSERT INTO touched_names_before SELECT n.*
    FROM touched_before b JOIN session_names n ON n.project_id = b.project_id AND n.started_at = b.started_at AND n.session_id = b.id;
    ANALYZE touched_names_before;
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
    WHERE %1$s
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
  )%2$s
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
  %3$s
  $sql$, CASE WHEN from_xid = 0 THEN 'true' ELSE
    '(e.project_id, e.session_id) IN (SELECT project_id, session_id FROM touched_sessions)' END,
    -- After a first run, the rows written are also kept as `touched_after`: every routine below
    -- reads the touched sessions from it rather than looking each one up again.
    CASE WHEN from_xid > 0 THEN ', upserted AS (' ELSE '' END,
    CASE WHEN from_xid > 0 THEN 'RETURNING sessions.*) INSERT INTO touched_after SELECT * FROM upserted' ELSE '' END);
  GET DIAGNOSTICS touched = ROW_COUNT;
  ANALYZE touched_after;

  PERFORM refresh_rollups(rebuild_all);
  PERFORM refresh_visitor_sketches(rebuild_all);
  PERFORM refresh_dimension_sketches(rebuild_all);
  PERFORM refresh_pair_rollups(rebuild_all);
  PERFORM refresh_page_dimension_rollups(rebuild_all);
  -- After a full build, fresh statistics ahead of autovacuum (which had not reached the 1.5 GB of
  -- pair rows 20 minutes after a 10M-event build): the next runs' upserts and the queries are
  -- planned from what the tables hold.
  IF rebuild_all THEN
    ANALYZE session_rollups, session_day_rollups, page_rollups, page_day_rollups, visitor_sketches,
      visitor_day_sketches, visitor_dimension_sketches, session_pair_rollups, page_dimension_rollups;
  END IF;
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
-- session_values_join(source): a JOIN clause that pairs each session `s` of a query with every
-- value of the multi-valued dimensions it has, once each, as `f.dimension` and `f.value`: each
-- path (not empty) that its events carry ('path') and each event name it holds ('name'). A session
-- counts under each of its values, so the rows of one value hold exactly the sessions that a
-- filter "sessions with an event on path …" or "… with an event named …" keeps.
-- `source` says which rows are read: 'stored' (session_pages, session_names), 'before'
-- (touched_pages_before, touched_names_before: the touched sessions' rows as they were) or 'after'
-- (touched_pages, touched_names: as this run wrote them). A session has a page row per (origin,
-- path), so its paths are made distinct: a path seen on two origins would count it twice.
-- refresh_rollups, refresh_pair_rollups and refresh_page_dimension_rollups join it
-- (src/db/routines/); refresh_dimension_sketches reads the rows through the session's start
-- instead, since a sketch absorbs a repeated visitor.
CREATE OR REPLACE FUNCTION session_values_join(source text) RETURNS text
LANGUAGE sql
IMMUTABLE
AS $fn$
  SELECT format(' JOIN (SELECT DISTINCT project_id, session_id, ''path'' AS dimension, path AS value FROM %I'
    ' WHERE path <> '''' UNION ALL SELECT project_id, session_id, ''name'', name FROM %I) AS f'
    ' ON f.project_id = s.project_id AND f.session_id = s.id',
    CASE source WHEN 'stored' THEN 'session_pages' WHEN 'before' THEN 'touched_pages_before' ELSE 'touched_pages' END,
    CASE source WHEN 'stored' THEN 'session_names' WHEN 'before' THEN 'touched_names_before' ELSE 'touched_names' END)
$fn$;
--> statement-breakpoint
DROP FUNCTION session_path_join(text);
--> statement-breakpoint
-- The session names and the rows of the 'name' dimension are new: the next refresh builds the
-- rollups, the session pages and the session names whole.
UPDATE derived_state SET processed_xid = 0 WHERE name = 'rollups';
