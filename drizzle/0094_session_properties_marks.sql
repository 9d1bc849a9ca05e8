-- property_leaves(properties, prefix): each leaf of an event's properties that `#>>` can print as
-- the value of a key path: a string (its text, "" included), a number (its JSON text) or a boolean
-- (`true`, `false`), with the path that reaches it, array elements by their position (0, 1, …) as
-- `#>>` reads them. JSON null prints nothing and is left out. The session properties
-- (src/db/routines/refresh_session_properties.sql) are these leaves of a session's events, and
-- property filters read them (src/queries/property-leaves.ts keeps the same limits): a leaf with a
-- value over 256 bytes, a path of more than 16 keys or keys over 256 bytes in all is not kept, so
-- that every row fits its index.
--
-- What `#>>` prints at a path that the leaves do not hold as text (an object or an array, printed
-- as its JSON; a value over 256 bytes) is marked by a row of that path whose value is NULL: a
-- filter whose values such a text could pass (`contains`, `regex`, …) reads the events of the
-- sessions so marked, and only theirs, for the exact answer.
--
-- PL/pgSQL that recurses only into nested values, as flatten_properties does (a recursive CTE in a
-- SQL function is planned again for every row).
CREATE OR REPLACE FUNCTION property_leaves(properties jsonb, prefix text[] DEFAULT '{}')
RETURNS TABLE (path text[], value text)
LANGUAGE plpgsql
IMMUTABLE
PARALLEL SAFE
AS $fn$
DECLARE
  item record;
BEGIN
  IF cardinality(prefix) >= 16 OR jsonb_typeof(properties) NOT IN ('object', 'array') THEN
    RETURN;
  END IF;
  FOR item IN
    SELECT e.key AS child_key, e.value AS child, jsonb_typeof(e.value) AS kind
    FROM jsonb_each(CASE jsonb_typeof(properties) WHEN 'object' THEN properties ELSE '{}'::jsonb END) AS e
    UNION ALL
    SELECT (a.position - 1)::text, a.element, jsonb_typeof(a.element)
    FROM jsonb_array_elements(CASE jsonb_typeof(properties) WHEN 'array' THEN properties ELSE '[]'::jsonb END)
      WITH ORDINALITY AS a(element, position)
  LOOP
    path := prefix || item.child_key;
    IF item.kind IN ('string', 'number', 'boolean') THEN
      value := item.child #>> '{}';
      IF octet_length(array_to_string(path, '')) <= 256 THEN
        IF octet_length(value) > 256 THEN
          value := NULL;
        END IF;
        RETURN NEXT;
      END IF;
    ELSIF item.kind IN ('object', 'array') THEN
      IF octet_length(array_to_string(path, '')) <= 256 THEN
        value := NULL;
        RETURN NEXT;
      END IF;
      RETURN QUERY SELECT l.path, l.value FROM property_leaves(item.child, path) AS l;
    END IF;
  END LOOP;
END;
$fn$;
--> statement-breakpoint
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
