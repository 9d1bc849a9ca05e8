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
  -- and each event name it holds ('name'): %1$s is the FROM clause that yields the sessions as `s`
  -- (and their zone as `z`), %2$s its WHERE condition, %3$I and %4$I the tables of their pages and
  -- names (session_pages and session_names, or this run's copies), joined through the session's
  -- start (an index of the stored ones). One SELECT per table: joined to a UNION of both, the
  -- planner scans both tables whole. A path on two origins repeats an entry, which the distinct
  -- entries of a group absorb.
  values_of text := (SELECT string_agg(format('SELECT s.project_id COLLATE "C" AS project_id,'
      ' date_trunc(''day'', s.started_at, z.timezone) AS day, visitor_entry(s.profile_id) AS entry,'
      ' %1$L AS dimension, f.%1$I COLLATE "C" AS value FROM %%1$s JOIN %%%2$s$I f ON f.project_id = s.project_id'
      ' AND f.started_at = s.started_at AND f.session_id = s.id AND f.%1$I <> '''' WHERE %%2$s', dimension, position),
      ' UNION ALL ')
    FROM (VALUES ('path', 3), ('name', 4)) AS v(dimension, position));
  value_groups text := ' UNION ALL SELECT project_id, day, dimension, value AS name,'
    ' array_agg(DISTINCT entry ORDER BY entry) AS entries FROM dimension_values GROUP BY 1, 2, 3, 4';
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
    'dimension_days d JOIN dimension_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day'
    ' AND s.started_at < ((d.day AT TIME ZONE z.timezone)::date + 1)::timestamp AT TIME ZONE z.timezone',
    'true', 'session_pages', 'session_names');
  -- Only when some project is rebuilt: planned with none, the join reads both tables whole.
  IF EXISTS (SELECT 1 FROM dimension_zones WHERE rebuilt) THEN
    EXECUTE 'INSERT INTO dimension_values ' || format(values_of,
      'dimension_zones z JOIN sessions s ON s.project_id = z.project_id', 'z.rebuilt', 'session_pages', 'session_names');
  END IF;
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
    ' JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt',
    'NOT EXISTS (SELECT 1 FROM dimension_days d WHERE d.project_id = s.project_id'
    ' AND d.day = date_trunc(''day'', s.started_at, z.timezone))', 'touched_pages', 'touched_names');
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
  -- Only when some project is rebuilt: the distinct paths of the stored pages are made before the
  -- join, from every page (10M events: 24 s).
  IF EXISTS (SELECT 1 FROM page_zones WHERE rebuilt) THEN
    EXECUTE 'CREATE TEMPORARY TABLE value_pages ON COMMIT DROP AS ' || format(value_pages_of,
      'page_zones z JOIN sessions s ON s.project_id = z.project_id'
      ' JOIN session_pages p ON p.project_id = s.project_id AND p.session_id = s.id'
      || session_values_join('stored') || ' WHERE z.rebuilt', '1');
    ANALYZE value_pages;
    PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, value_groups, false);
    DROP TABLE value_pages;
  END IF;
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- By difference, for the others: the pages of the touched sessions as they were, subtracted,
  -- and as they are, added.
  DROP TABLE dimension_pages;
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
  -- Only when some project is rebuilt: the distinct paths of the stored pages are made before the
  -- join, from every page (10M events: 24 s).
  IF EXISTS (SELECT 1 FROM pair_zones WHERE rebuilt) THEN
    EXECUTE 'CREATE TEMPORARY TABLE pair_values ON COMMIT DROP AS ' || format(values_of,
      'pair_zones z JOIN sessions s ON s.project_id = z.project_id' || session_values_join('stored') || ' WHERE z.rebuilt', '1');
    ANALYZE pair_values;
    PERFORM add_rollup_rows('session_pair_rollups', keys, sums, value_pairs, false);
    DROP TABLE pair_values;
  END IF;
  IF rebuild_all THEN
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
END;
$fn$;
--> statement-breakpoint
-- session_values_join(source): a JOIN clause that pairs each session `s` of a query with every
-- value of the multi-valued dimensions it has, once each, as `f.dimension` and `f.value`: each
-- path and each event name (neither empty) that its events carry ('path', 'name'). A session
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
    ' WHERE path <> '''' UNION ALL SELECT project_id, session_id, ''name'', name FROM %I WHERE name <> '''') AS f'
    ' ON f.project_id = s.project_id AND f.session_id = s.id',
    CASE source WHEN 'stored' THEN 'session_pages' WHEN 'before' THEN 'touched_pages_before' ELSE 'touched_pages' END,
    CASE source WHEN 'stored' THEN 'session_names' WHEN 'before' THEN 'touched_names_before' ELSE 'touched_names' END)
$fn$;
