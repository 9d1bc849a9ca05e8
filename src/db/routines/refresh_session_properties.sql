-- refresh_session_properties(rebuild_all): the session properties (session_properties), every
-- distinct leaf (property_leaves, src/db/routines/property_leaves.sql) of the properties of each
-- session's events (and a NULL-valued row for each path where they hold an object, an array or a
-- long text), with the session's start, which answer property filters by index
-- (src/queries/filter-conditions.ts). refresh_session_rollups (src/db/routines/refresh_session_rollups.sql)
-- calls it after the session rows, with its temporary tables `touched_after` (the sessions of this
-- run as written) and `touched_before` (as they were; none for new sessions).
--
-- A touched session's rows are made again from all of its events, and those that did not change
-- stay in place (replace_session_rows, src/db/routines/replace_session_rows.sql), as its pages and
-- names do. Only events with properties are read: most events (every screen view of the demo
-- data) have none. On a full build every session's rows are written, the indexes after the rows.
CREATE OR REPLACE FUNCTION refresh_session_properties(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  scratch_tables constant text[] := ARRAY['touched_properties', 'touched_properties_before'];
  set_aside text[] := '{}';
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  CREATE TEMPORARY TABLE touched_properties ON COMMIT DROP AS SELECT * FROM session_properties WITH NO DATA;
  CREATE TEMPORARY TABLE touched_properties_before ON COMMIT DROP AS SELECT * FROM session_properties WITH NO DATA;
  IF rebuild_all THEN
    TRUNCATE session_properties;
    set_aside := set_aside_indexes('session_properties');
  ELSE
    -- A session's rows carry its start: found through it, by the (project_id, started_at) index.
    INSERT INTO touched_properties_before SELECT p.*
    FROM touched_before b
    JOIN session_properties p ON p.project_id = b.project_id AND p.started_at = b.started_at AND p.session_id = b.id;
    ANALYZE touched_properties_before;
  END IF;
  -- Every session on a full build (one pass over the events with properties), else the touched ones
  -- (their events by the (project_id, session_id) index).
  EXECUTE format($sql$
  INSERT INTO touched_properties (project_id, session_id, started_at, path, value)
  SELECT DISTINCT s.project_id, s.id, s.started_at, l.path, l.value
  FROM %s s
  JOIN events e ON e.project_id = s.project_id AND e.session_id = s.id
  CROSS JOIN LATERAL property_leaves(e.properties) AS l
  WHERE e.properties <> '{}'::jsonb
  $sql$, CASE WHEN rebuild_all THEN 'sessions' ELSE 'touched_after' END);
  ANALYZE touched_properties;
  PERFORM replace_session_rows('session_properties', 'touched_properties', 'touched_properties_before', rebuild_all);
  IF rebuild_all THEN
    PERFORM restore_indexes(set_aside);
    ANALYZE session_properties;
  END IF;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
