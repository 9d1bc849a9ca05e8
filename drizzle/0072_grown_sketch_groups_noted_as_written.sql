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
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['dimension_zones', 'dimension_days', 'dimension_sessions', 'dimension_values',
    'dimension_groups', 'dimension_grown'];
  sparse_limit constant integer := 128;
  -- The sessions of a rebuilt day `d`: those whose start `date_trunc` puts in it, as the groups
  -- are keyed. Where midnight happens twice (clocks falling back at 01:00, Havana), a start in the
  -- first pass belongs to the day that begins at the second, so the range around the day only
  -- narrows the index read: cut at the midnights, it put those sessions under a day not rebuilt
  -- (a duplicate key) or left them out of theirs (visitors lost). It starts half a day before the
  -- day's key (no zone has fallen back more than 7 hours since 1970) and ends at the next date's
  -- midnight as Postgres resolves it (never before the day's end).
  day_sessions constant text := 's.started_at >= d.day - interval ''12 hours'''
    ' AND s.started_at < ((d.day AT TIME ZONE z.timezone)::date + 1)::timestamp AT TIME ZONE z.timezone'
    ' AND date_trunc(''day'', s.started_at, z.timezone) = d.day';
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
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
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
    EXECUTE 'DELETE FROM visitor_dimension_sketches v USING dimension_zones z WHERE v.project_id = z.project_id'
      ' AND z.rebuilt AND ' || rebuilt_projects_only('dimension_zones', 'v');
    DELETE FROM visitor_dimension_sketches v USING dimension_days d WHERE v.project_id = d.project_id AND v.day = d.day;
  END IF;
  EXECUTE format('CREATE TEMPORARY TABLE dimension_sessions ON COMMIT DROP AS ' || sessions_of,
    'dimension_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt AND '
    || rebuilt_projects_only('dimension_zones', 's') || ' UNION ALL ' || format(sessions_of,
    'dimension_days d JOIN dimension_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND ' || day_sessions));
  EXECUTE 'CREATE TEMPORARY TABLE dimension_values ON COMMIT DROP AS ' || format(values_of,
    'dimension_days d JOIN dimension_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND ' || day_sessions,
    'true', 'session_pages', 'session_names');
  -- Only when some project is rebuilt: planned with none, the join reads both tables whole.
  IF EXISTS (SELECT 1 FROM dimension_zones WHERE rebuilt) THEN
    EXECUTE 'INSERT INTO dimension_values ' || format(values_of,
      'dimension_zones z JOIN sessions s ON s.project_id = z.project_id',
      'z.rebuilt AND ' || rebuilt_projects_only('dimension_zones', 's', 'f'), 'session_pages', 'session_names');
  END IF;
  EXECUTE format('CREATE TEMPORARY TABLE dimension_groups ON COMMIT DROP AS ' || groups_of || value_groups, 'dimension_sessions');
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, entries)
  SELECT project_id, day, dimension, name, 0, entries FROM dimension_groups WHERE cardinality(entries) <= sparse_limit;
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM dimension_groups g CROSS JOIN LATERAL entry_planes(g.entries) AS p WHERE cardinality(g.entries) > sparse_limit;
  IF rebuild_all THEN
    PERFORM free_temporary_tables(VARIADIC scratch_tables);
    RETURN;
  END IF;

  -- Merged: the new sessions of the other days, and the paths and names of every touched session
  -- there (a session's paths and names only grow as its events arrive: a union adds the new ones).
  PERFORM free_temporary_tables('dimension_sessions', 'dimension_values', 'dimension_groups');
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
  -- Into a sparse or a new group: the union of entries. The rows it leaves past the limit are
  -- noted as it writes them: looked for afterwards among the sparse rows of the run's days, they
  -- were found by reading every sparse row of the table (its key leads with the project and the
  -- dimension, not the plane), a read that grew with the data.
  PERFORM free_temporary_tables('dimension_grown');
  CREATE TEMPORARY TABLE dimension_grown (row_id tid) ON COMMIT DROP;
  WITH merged AS (
    INSERT INTO visitor_dimension_sketches AS v (project_id, day, dimension, name, plane, entries)
    SELECT g.project_id, g.day, g.dimension, g.name, 0, g.entries FROM dimension_groups g
    WHERE NOT EXISTS (SELECT 1 FROM visitor_dimension_sketches d WHERE d.project_id = g.project_id
      AND d.dimension = g.dimension AND d.name IS NOT DISTINCT FROM g.name AND d.day = g.day AND d.plane = 1)
    ON CONFLICT (project_id, dimension, name, day, plane) DO UPDATE
    SET entries = ARRAY(SELECT DISTINCT e FROM unnest(v.entries || excluded.entries) AS e ORDER BY e)
    RETURNING v.ctid AS row_id, cardinality(v.entries) AS size
  )
  INSERT INTO dimension_grown SELECT row_id FROM merged WHERE size > sparse_limit;
  -- A sparse group grown past the limit (or born past it in this run): written dense.
  WITH grown AS (
    DELETE FROM visitor_dimension_sketches v WHERE v.ctid = ANY (ARRAY(SELECT row_id FROM dimension_grown))
    RETURNING v.project_id, v.day, v.dimension, v.name, v.entries
  )
  INSERT INTO visitor_dimension_sketches (project_id, day, dimension, name, plane, registers)
  SELECT g.project_id, g.day, g.dimension, g.name, p.plane, p.registers
  FROM grown g CROSS JOIN LATERAL entry_planes(g.entries) AS p;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
