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
-- Building a sketch hashes every session once per dimension (insert_visitor_sketches,
-- src/db/routines/insert_visitor_sketches.sql), about 7 µs per session and dimension here, so a
-- run does as little of it as the sketches allow:
-- - a full build (`rebuild_all`: the first run, a rebuild of the rollups) builds every day of every
--   project;
-- - a project whose timezone changed gets all of its days rebuilt;
-- - a session that existed and now has another day, visitor or value of some dimension (a late
--   earlier event moved its start or its first event) makes its old and its new day rebuilt from
--   their sessions, since a sketch cannot forget a visitor;
-- - a new session is merged into the sketches of its day and values by union, which adds its
--   visitor and changes nothing where the visitor is counted already. A session that existed and
--   did not change is counted already and costs nothing.
CREATE OR REPLACE FUNCTION refresh_dimension_sketches(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  -- The value of every dimension of a session `s`, as (dimension, name) rows.
  dimension_values text := (SELECT 'VALUES ' || string_agg(format('(%L, nullif(s.%I, ''''))', d.dimension, d.dimension), ', ')
    FROM session_dimensions() AS d);
  -- The rows insert_visitor_sketches reads, from sessions `s` that carry their `day`.
  unpivoted text := 'SELECT s.project_id, s.day, d.dimension, d.name, s.profile_id FROM (%s) AS s'
    ' CROSS JOIN LATERAL (%s) AS d(dimension, name)';
BEGIN
  DROP TABLE IF EXISTS pg_temp.dimension_zones, pg_temp.dimension_days;
  CREATE TEMPORARY TABLE dimension_zones ON COMMIT DROP AS
  SELECT p.id AS project_id, coalesce(p.timezone, 'UTC') AS timezone,
    rebuild_all OR z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC') AS rebuilt
  FROM projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id;

  -- Every sketch of the projects rebuilt whole.
  IF rebuild_all THEN
    TRUNCATE visitor_dimension_sketches;
  ELSE
    DELETE FROM visitor_dimension_sketches v USING dimension_zones z
    WHERE v.project_id = z.project_id AND z.rebuilt;
  END IF;
  PERFORM insert_visitor_sketches('visitor_dimension_sketches', ARRAY['day', 'dimension', 'name'],
    format(unpivoted, 'SELECT s.*, date_trunc(''day'', s.started_at, z.timezone) AS day'
      ' FROM dimension_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt', dimension_values),
    false);
  IF rebuild_all THEN
    RETURN;
  END IF;

  -- The days of the other projects that lost a session or a value: before and now.
  EXECUTE format($sql$
  CREATE TEMPORARY TABLE dimension_days ON COMMIT DROP AS
  SELECT DISTINCT z.project_id, z.timezone, d.day
  FROM touched_before b
  JOIN sessions s ON s.project_id = b.project_id AND s.id = b.id
  JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt
  CROSS JOIN LATERAL (VALUES (date_trunc('day', b.started_at, z.timezone)), (date_trunc('day', s.started_at, z.timezone))) AS d(day)
  WHERE date_trunc('day', b.started_at, z.timezone) <> date_trunc('day', s.started_at, z.timezone)
    OR b.profile_id <> s.profile_id OR %s
  $sql$, (SELECT string_agg(format('nullif(b.%1$I, '''') IS DISTINCT FROM nullif(s.%1$I, '''')', d.dimension), ' OR ')
    FROM session_dimensions() AS d));
  ANALYZE dimension_days;
  DELETE FROM visitor_dimension_sketches v USING dimension_days d
  WHERE v.project_id = d.project_id AND v.day = d.day;
  PERFORM insert_visitor_sketches('visitor_dimension_sketches', ARRAY['day', 'dimension', 'name'],
    format(unpivoted, 'SELECT s.*, d.day FROM dimension_days d JOIN sessions s ON s.project_id = d.project_id'
      ' AND s.started_at >= d.day AND s.started_at < ((d.day AT TIME ZONE d.timezone)::date + 1)::timestamp AT TIME ZONE d.timezone',
      dimension_values),
    false);

  -- New sessions of the other days: merged in.
  PERFORM insert_visitor_sketches('visitor_dimension_sketches', ARRAY['day', 'dimension', 'name'],
    format(unpivoted, 'SELECT s.*, date_trunc(''day'', s.started_at, z.timezone) AS day'
      ' FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id'
      ' JOIN dimension_zones z ON z.project_id = s.project_id AND NOT z.rebuilt'
      ' WHERE NOT EXISTS (SELECT 1 FROM touched_before b WHERE b.project_id = s.project_id AND b.id = s.id)'
      ' AND NOT EXISTS (SELECT 1 FROM dimension_days d WHERE d.project_id = s.project_id'
      ' AND d.day = date_trunc(''day'', s.started_at, z.timezone))', dimension_values),
    true);
END;
$fn$;
