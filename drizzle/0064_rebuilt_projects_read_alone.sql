-- rebuilt_projects_only(zones, aliases): a condition that keeps a statement's rows to the projects
-- rebuilt whole in this run, for the statements that rebuild them. `zones` is a routine's copy of
-- derived_zones() (src/db/routines/derived_zones.sql), `aliases` the tables the statement reads,
-- each with a `project_id`: "s.project_id = ANY('{…}'::text[]) AND f.project_id = …".
--
-- Joined to the zones alone, those statements read every project's sessions and pages: a new
-- project is rebuilt on its first run, so creating one made the next refresh of a 1M-event
-- database take 28 s instead of 0.2 s, without a single new event. The ids as constants let each
-- read use its table's (project_id, …) index, and reach into the distinct paths of
-- session_values_join (src/db/routines/session_values_join.sql), which a join cannot.
-- When every project is rebuilt (a full build) it is "true": the statements read everything anyway.
CREATE OR REPLACE FUNCTION rebuilt_projects_only(zones regclass, VARIADIC aliases text[]) RETURNS text
LANGUAGE plpgsql
STABLE
AS $fn$
DECLARE
  ids text[];
  everyone boolean;
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(project_id) FILTER (WHERE rebuilt), ''{}''), coalesce(bool_and(rebuilt), true)'
    ' FROM %s', zones) INTO ids, everyone;
  IF everyone THEN
    RETURN 'true';
  END IF;
  RETURN (SELECT string_agg(format('%I.project_id = ANY(%L::text[])', alias, ids), ' AND ') FROM unnest(aliases) AS alias);
END;
$fn$;
--> statement-breakpoint
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
    'dimension_groups'];
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
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
-- refresh_entry_exit_rollups(rebuild_all, next_xid): the entry and exit pages per hour and per
-- project day (entry_exit_rollups, entry_exit_day_rollups; src/db/schema/entry-exit-rollups.ts)
-- of the sessions refresh_session_rollups (src/db/routines/refresh_session_rollups.sql) has just
-- derived, which calls it after refresh_rollups (src/db/routines/refresh_rollups.sql) with the
-- same temporary tables: `touched_before` and `touched_after` (the touched sessions as they were
-- and as they are now) and `rollup_zones` (each project's zone, and whether its day rows are
-- rebuilt whole in this run).
--
-- A session with a screen view counts twice: under its entry page (mode 'entry', its first screen
-- view's origin and path) and its exit page ('exit', its last). Every column is a sum, so the rows
-- are maintained by difference (add_rollup_rows, src/db/routines/add_rollup_rows.sql): the touched
-- sessions as they were are subtracted and as they are now added. A full build, the first run
-- after these tables were added (no derived_state('entry_exit') row yet: they are built from every
-- stored session without rebuilding the other rollups), and a project whose timezone changed (its
-- day rows) write from all sessions.
CREATE OR REPLACE FUNCTION refresh_entry_exit_rollups(rebuild_all boolean, next_xid bigint) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['rollup_entry_exit'];
  sums text[] := ARRAY['sessions', 'bounces', 'screen_views', 'revenue'];
  -- The sessions with a screen view, once per mode, narrow and signed: %1$s yields them as `s`
  -- with their project's zone as `z`, %2$s is the sign, %3$s and %4$s whether hour and day count.
  pages_of text := 'SELECT s.project_id COLLATE "C" AS project_id, m.mode,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', s.started_at, z.timezone) END AS day,'
    ' CASE m.mode WHEN ''entry'' THEN s.entry_origin ELSE s.exit_origin END COLLATE "C" AS origin,'
    ' CASE m.mode WHEN ''entry'' THEN s.entry_path ELSE s.exit_path END COLLATE "C" AS path,'
    ' %2$s::integer AS sessions, CASE WHEN s.is_bounce THEN %2$s ELSE 0 END AS bounces,'
    ' %2$s * s.screen_view_count::bigint AS screen_views, %2$s * s.revenue AS revenue'
    ' FROM %1$s CROSS JOIN (VALUES (''entry''), (''exit'')) AS m(mode) WHERE s.screen_view_count > 0';
  -- Their sums per unit (%1$I, `hour` or `day`) and page.
  page_groups text := 'SELECT project_id, mode, %1$I, origin, path, sum(sessions) AS sessions, sum(bounces) AS bounces,'
    ' sum(screen_views) AS screen_views, sum(revenue) AS revenue FROM rollup_entry_exit'
    ' WHERE %1$I IS NOT NULL GROUP BY 1, 2, 3, 4, 5';
  build_all boolean := rebuild_all OR NOT EXISTS (SELECT 1 FROM derived_state WHERE name = 'entry_exit');
  rezoned boolean;
BEGIN
  rezoned := NOT build_all AND EXISTS (SELECT 1 FROM rollup_zones WHERE rollup_zones.rebuilt);
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  IF build_all THEN
    TRUNCATE entry_exit_rollups, entry_exit_day_rollups;
    EXECUTE 'CREATE TEMPORARY TABLE rollup_entry_exit ON COMMIT DROP AS '
      || format(pages_of, 'sessions s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'true');
  ELSIF rezoned THEN
    EXECUTE 'DELETE FROM entry_exit_day_rollups r USING rollup_zones z WHERE r.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 'r');
    EXECUTE 'CREATE TEMPORARY TABLE rollup_entry_exit ON COMMIT DROP AS '
      || format(pages_of, 'rollup_zones z JOIN sessions s ON s.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 's'), '1', 'false', 'true');
  END IF;
  IF build_all OR rezoned THEN
    ANALYZE rollup_entry_exit;
    EXECUTE format('INSERT INTO entry_exit_rollups (project_id, mode, hour, origin, path, %s) ', array_to_string(sums, ', '))
      || format(page_groups, 'hour');
    EXECUTE format('INSERT INTO entry_exit_day_rollups (project_id, mode, day, origin, path, %s) ', array_to_string(sums, ', '))
      || format(page_groups, 'day');
    PERFORM free_temporary_tables('rollup_entry_exit');
  END IF;
  IF NOT build_all THEN
    -- By difference; the day rows of the projects rebuilt above are left out.
    EXECUTE 'CREATE TEMPORARY TABLE rollup_entry_exit ON COMMIT DROP AS '
      || format(pages_of, 'touched_before s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '-1', 'true', 'NOT z.rebuilt')
      || ' UNION ALL '
      || format(pages_of, 'touched_after s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'NOT z.rebuilt');
    ANALYZE rollup_entry_exit;
    PERFORM add_rollup_rows('entry_exit_rollups', ARRAY['project_id', 'mode', 'hour', 'origin', 'path'], sums,
      format(page_groups, 'hour'), true);
    PERFORM add_rollup_rows('entry_exit_day_rollups', ARRAY['project_id', 'mode', 'day', 'origin', 'path'], sums,
      format(page_groups, 'day'), true);
  END IF;
  INSERT INTO derived_state (name, processed_xid, last_run_at) VALUES ('entry_exit', next_xid, now())
  ON CONFLICT (name) DO UPDATE SET processed_xid = greatest(derived_state.processed_xid, excluded.processed_xid),
    last_run_at = excluded.last_run_at;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
-- refresh_event_pair_rollups(from_xid, next_xid): the event aggregates per project, local day, event
-- name and pair of values of two chart columns (event_pair_rollups), which answer a chart filtered
-- on one column and split by another (src/queries/charts/rollups.ts). refresh_event_rollups
-- (src/db/routines/refresh_event_rollups.sql) calls it under its lock and watermark, once it has
-- copied the events between the two watermarks (every event on the first run) into the temporary
-- table `rollup_events`; both tables then hold exactly the events below next_xid.
--
-- A day is the project's own (its timezone, UTC when it has none), recorded per project in
-- event_pair_timezones. The new events are added into their rows (counts and sums add up, minimums
-- and maximums and the earliest instant keep the smaller or larger), so a run costs what its new
-- events cost. A project whose timezone is not the one its rows were built in has its rows built
-- again from all of its events below next_xid.
--
-- Besides the pairs, rows of one column (by_dimension '') and of the event name alone (both '')
-- carry the same aggregates, and every row also counts its distinct visitors (`profiles`) and
-- sessions: those with an event of the row's name and values that day. Distinct counts do not add
-- up, so a run adds to a row only the visitors and sessions it had not counted yet: those none of
-- whose earlier events (below from_xid) of that day have the row's name and values. The earlier
-- events of the day of every visitor and session with a new event are read again through the
-- events' (project, profile, time) and (project, session) indexes. An event's day is its local
-- date, also where midnight happens twice (Havana falls back from 01:00 to 00:00): there the date's
-- midnight as Postgres resolves it is the second, so the read starts half a day before it (no zone
-- has fallen back more than 7 hours since 1970) and keeps the events of that date.
CREATE OR REPLACE FUNCTION refresh_event_pair_rollups(from_xid bigint, next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Hash aggregates, with room for those of a full build (as in refresh_event_rollups).
SET work_mem = '256MB'
SET enable_sort = off
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['pair_event_zones', 'pair_events', 'pair_row_kinds', 'pair_visitors', 'pair_sessions'];
  -- The columns whose pairs are rolled up, the earlier one of a pair first: CHART_PAIR_COLUMNS in
  -- src/lib/dimensions.ts, held equal by test/node/routines.test.ts.
  pair_dimensions text[] := ARRAY['country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The columns of `rollup_events` or `events` (as `e`) the pairs read, with the zone `z`'s local day.
  columns text := $$e.project_id COLLATE "C" AS project_id, (e.created_at AT TIME ZONE z.timezone)::date AS day,
    e.created_at, e.name COLLATE "C" AS name, e.duration, e.revenue, e.profile_id COLLATE "C" AS profile_id,
    e.session_id COLLATE "C" AS session_id$$
    || (SELECT string_agg(format(', e.%1$I COLLATE "C" AS %1$I', d), '') FROM unnest(pair_dimensions) d);
  -- A member's values (below), "not set" as NULL.
  member_values text := (SELECT string_agg(format(', nullif(e.%1$I, '''') COLLATE "C" AS %1$I', d), '')
    FROM unnest(pair_dimensions) d);
  member_keys text := 'project_id, day, name' || (SELECT string_agg(', ' || quote_ident(d), '') FROM unnest(pair_dimensions) d);
  member record;
  member_day date;
  kind record;
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Each project's zone, whether its rows are built whole in this run (all of them on the first),
  -- and whether it has no record yet: then no run has added any of its events, so its new ones are
  -- all it has.
  CREATE TEMPORARY TABLE pair_event_zones ON COMMIT DROP AS
  SELECT ids.project_id, coalesce(p.timezone, 'UTC') AS timezone,
    from_xid = 0 OR coalesce(t.timezone <> coalesce(p.timezone, 'UTC'), false) AS rebuilt,
    t.timezone IS NULL AS unrecorded
  FROM (SELECT id COLLATE "C" AS project_id FROM projects UNION SELECT project_id FROM rollup_events) AS ids
  LEFT JOIN projects p ON p.id = ids.project_id
  LEFT JOIN event_pair_timezones t ON t.project_id = ids.project_id;
  -- Without statistics the planner guessed many rebuilt projects and read every event to find theirs.
  ANALYZE pair_event_zones;

  -- Every kind of row as (dimension, by_dimension): each pair of columns (the earlier one in the
  -- list first), each column alone ('' second) and the event name alone ('' both), with the
  -- expressions of their values over the events and the members below.
  CREATE TEMPORARY TABLE pair_row_kinds ON COMMIT DROP AS
  SELECT k.dimension, k.by_dimension, k.ordinal,
    CASE WHEN k.dimension = '' THEN 'NULL::text' ELSE quote_ident(k.dimension) END AS value_sql,
    CASE WHEN k.by_dimension = '' THEN 'NULL::text' ELSE quote_ident(k.by_dimension) END AS by_value_sql
  FROM (
    SELECT a.d AS dimension, b.d AS by_dimension, a.i * 100 + b.i AS ordinal
    FROM unnest(pair_dimensions) WITH ORDINALITY AS a(d, i)
    JOIN unnest(pair_dimensions) WITH ORDINALITY AS b(d, i) ON b.i > a.i
    UNION ALL SELECT c.d, '', 10000 + c.i FROM unnest(pair_dimensions) WITH ORDINALITY AS c(d, i)
    UNION ALL SELECT '', '', 20000
  ) AS k;

  -- The events to add: the new ones of the projects kept (on the first run every event, all
  -- rebuilt), then all of those of the projects rebuilt, read again from `events`.
  EXECUTE format('CREATE TEMPORARY TABLE pair_events ON COMMIT DROP AS SELECT %s FROM rollup_events e'
    ' JOIN pair_event_zones z ON z.project_id = e.project_id WHERE %s = 0 OR NOT z.rebuilt', columns, from_xid);
  IF from_xid = 0 THEN
    TRUNCATE event_pair_rollups;
  ELSIF EXISTS (SELECT 1 FROM pair_event_zones WHERE rebuilt) THEN
    EXECUTE 'DELETE FROM event_pair_rollups r USING pair_event_zones z WHERE r.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('pair_event_zones', 'r');
    EXECUTE format('INSERT INTO pair_events SELECT %s FROM pair_event_zones z JOIN events e'
      ' ON e.project_id = z.project_id AND e.ingest_xid < %s WHERE z.rebuilt AND %s', columns, next_xid,
      rebuilt_projects_only('pair_event_zones', 'e'));
  END IF;
  ANALYZE pair_events;

  -- One hash aggregate per kind of row; empty strings are "not set", like NULL. Each row is added
  -- into its group, or starts it.
  EXECUTE 'INSERT INTO event_pair_rollups AS r (project_id, day, name, dimension, value, by_dimension, by_value,'
      ' first_at, events, duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max) '
    || (SELECT string_agg(format('SELECT project_id, day, name, %L, nullif(%s, ''''), %L, nullif(%s, ''''),'
        ' min(created_at), count(*), sum(duration), min(duration), max(duration), sum(revenue), min(revenue), max(revenue)'
        ' FROM pair_events GROUP BY 1, 2, 3, 5, 7', k.dimension, k.value_sql, k.by_dimension, k.by_value_sql),
        ' UNION ALL ' ORDER BY k.ordinal) FROM pair_row_kinds k)
    || ' ON CONFLICT ON CONSTRAINT event_pair_rollups_key DO UPDATE SET first_at = least(r.first_at, excluded.first_at),'
      ' events = r.events + excluded.events, duration_sum = r.duration_sum + excluded.duration_sum,'
      ' duration_min = least(r.duration_min, excluded.duration_min), duration_max = greatest(r.duration_max, excluded.duration_max),'
      ' revenue_sum = r.revenue_sum + excluded.revenue_sum, revenue_min = least(r.revenue_min, excluded.revenue_min),'
      ' revenue_max = greatest(r.revenue_max, excluded.revenue_max)';

  -- The members of the rows: per visitor (and per session), local day, event name and values,
  -- whether all of its events there are new (`fresh`). They are the new events and, on a later run,
  -- every earlier event of the same day of each kept project's visitors and sessions with a new one.
  -- Each is one probe of the events' (project, profile, time) or (project, session) index: in
  -- their own collation (in "C" the indexes do not apply), and fenced as a lateral subquery, since
  -- the planner, misled by the sessions' estimated spread, hashed all 10 million events instead
  -- (6.8 s a run at 10M, against 0.4 s for the visitors' probes).
  FOR member IN SELECT * FROM (VALUES ('profile_id', 'pair_visitors'), ('session_id', 'pair_sessions')) AS m(id, members)
  LOOP
    EXECUTE format('CREATE TEMPORARY TABLE %1$I ON COMMIT DROP AS SELECT %2$s, %3$I, bool_and(fresh) AS fresh'
        ' FROM (SELECT project_id, day, name%4$s, %3$I, true AS fresh FROM pair_events e',
        member.members, member_keys, member.id, member_values)
      || CASE WHEN from_xid = 0 THEN '' ELSE format(' UNION ALL SELECT t.project_id, t.day, e.name COLLATE "C"%1$s,'
        ' e.%2$I COLLATE "C", false FROM (SELECT DISTINCT p.project_id, p.%2$I, p.day, z.timezone FROM pair_events p'
        ' JOIN pair_event_zones z ON z.project_id = p.project_id AND NOT z.rebuilt) t CROSS JOIN LATERAL (SELECT e.*'
        ' FROM events e WHERE e.project_id = t.project_id COLLATE "default" AND e.%2$I = t.%2$I COLLATE "default"'
        ' AND e.ingest_xid < %3$s AND e.created_at >= (t.day::timestamp AT TIME ZONE t.timezone) - interval ''12 hours'''
        ' AND e.created_at < ((t.day + 1)::timestamp AT TIME ZONE t.timezone)'
        ' AND (e.created_at AT TIME ZONE t.timezone)::date = t.day OFFSET 0) e',
        member_values, member.id, from_xid) END
      -- In day order: each day's statement below then reads its members from adjoining pages.
      -- Scattered, a day's 12,000 members at 1M events were spread over 6,000 pages, and reading
      -- them again for every kind of row was most of a first build (79 of 105 s).
      || format(') m GROUP BY %s, %I ORDER BY day', member_keys, member.id);
  END LOOP;

  -- Per row, the members it counts for the first time: those all of whose events of the row's name
  -- and values that day are new. Each such row got its events above, so this only updates. One
  -- statement per day and kind of row: a (row, member) pair is kept per member of each kind, which
  -- for a whole build is hundreds of millions, and a day's of one kind fit in memory (all at once
  -- they spilled 15 GB to disk at 10 million events and more).
  CREATE INDEX ON pair_visitors (day);
  CREATE INDEX ON pair_sessions (day);
  ANALYZE pair_visitors;
  ANALYZE pair_sessions;
  FOR member_day IN SELECT DISTINCT day FROM pair_visitors ORDER BY 1 LOOP
    FOR kind IN SELECT * FROM pair_row_kinds ORDER BY ordinal LOOP
      EXECUTE format('INSERT INTO event_pair_rollups AS r (project_id, day, name, dimension, value, by_dimension,'
          ' by_value, first_at, events, duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max,'
          ' profiles, sessions)'
          ' SELECT project_id, day, name, %1$L, value, %2$L, by_value, now(), 0, 0, 0, 0, 0, 0, 0,'
          ' sum(profiles)::int, sum(sessions)::int FROM ('
          'SELECT project_id, day, name, %3$s AS value, %4$s AS by_value, 1 AS profiles, 0 AS sessions'
          ' FROM pair_visitors WHERE day = $1 GROUP BY 1, 2, 3, 4, 5, profile_id HAVING bool_and(fresh) UNION ALL '
          'SELECT project_id, day, name, %3$s, %4$s, 0, 1 FROM pair_sessions'
          ' WHERE day = $1 GROUP BY 1, 2, 3, 4, 5, session_id HAVING bool_and(fresh)) m GROUP BY 1, 2, 3, 5, 7'
          ' ON CONFLICT ON CONSTRAINT event_pair_rollups_key DO UPDATE SET profiles = r.profiles + excluded.profiles,'
          ' sessions = r.sessions + excluded.sessions',
        kind.dimension, kind.by_dimension, kind.value_sql, kind.by_value_sql) USING member_day;
    END LOOP;
  END LOOP;

  INSERT INTO event_pair_timezones AS t (project_id, timezone)
  SELECT project_id, timezone FROM pair_event_zones WHERE rebuilt OR unrecorded
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone;
  IF from_xid = 0 THEN
    ANALYZE event_pair_rollups;
  END IF;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
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
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  CREATE TEMPORARY TABLE page_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  IF rebuild_all THEN
    TRUNCATE page_dimension_rollups;
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
  IF EXISTS (SELECT 1 FROM page_zones WHERE rebuilt) THEN
    FOREACH value_dimension IN ARRAY ARRAY['path', 'name'] LOOP
      EXECUTE 'CREATE TEMPORARY TABLE value_pages ON COMMIT DROP AS ' || format(value_pages_of,
        'page_zones z JOIN sessions s ON s.project_id = z.project_id'
        ' JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at AND p.session_id = s.id'
        || session_values_join('stored') || format(' WHERE z.rebuilt AND f.dimension = %L AND ', value_dimension)
        || rebuilt_projects_only('page_zones', 's', 'p', 'f'), '1');
      ANALYZE value_pages;
      PERFORM add_rollup_rows('page_dimension_rollups', keys, sums, value_groups, false);
      PERFORM free_temporary_tables('value_pages');
    END LOOP;
  END IF;
  IF rebuild_all THEN
    PERFORM free_temporary_tables(VARIADIC scratch_tables);
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
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  CREATE TEMPORARY TABLE pair_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  IF rebuild_all THEN
    TRUNCATE session_pair_rollups;
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
-- refresh_profile_activity(next_xid): the per-profile local days and their aggregates
-- (profile_days, active_user_days, retention_weeks; src/db/schema/profile-activity.ts) from the
-- events whose ingest_xid lies between its watermark derived_state('activity') and next_xid, the
-- snapshot xmin refresh_derived (src/db/routines/refresh_derived.sql) took first.
--
-- The new events are counted per (project, profile, local day of the project's timezone) and
-- added to profile_days. The aggregates depend on each profile's whole sequence of days (the gap
-- to its previous active day, its cohort, its next active week), so for every profile the run
-- touched its contribution is computed from profile_days before the merge and subtracted, and
-- computed again after it and added: exact under late events, whatever order they arrive in.
-- The first run (watermark 0) reads every event; a project whose timezone is no longer the one
-- recorded in activity_timezones has its rows rebuilt from all its events.
CREATE OR REPLACE FUNCTION refresh_profile_activity(next_xid bigint) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['activity_zones', 'activity_delta', 'activity_profiles', 'user_day_changes',
    'retention_week_changes'];
  from_xid bigint;
  sign integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('refresh_profile_activity'));
  INSERT INTO derived_state (name) VALUES ('activity') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'activity';
  IF from_xid >= next_xid THEN
    RETURN;
  END IF;

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Each project's zone, and whether its rows are rebuilt whole (every project on the first run).
  CREATE TEMPORARY TABLE activity_zones ON COMMIT DROP AS
  SELECT p.id AS project_id, coalesce(p.timezone, 'UTC') AS timezone,
    from_xid = 0 OR (z.timezone IS NOT NULL AND z.timezone <> coalesce(p.timezone, 'UTC')) AS rebuilt
  FROM projects p LEFT JOIN activity_timezones z ON z.project_id = p.id;
  IF from_xid = 0 THEN
    TRUNCATE profile_days, active_user_days, retention_weeks;
  ELSE
    EXECUTE 'DELETE FROM profile_days d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
    EXECUTE 'DELETE FROM active_user_days d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
    EXECUTE 'DELETE FROM retention_weeks d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
  END IF;

  -- The new events per profile and local day: through the ingest_xid BRIN index, or every event of
  -- a rebuilt project.
  CREATE TEMPORARY TABLE activity_delta (project_id text, profile_id text, day date, events integer,
    identified_events integer) ON COMMIT DROP;
  IF from_xid > 0 THEN
    INSERT INTO activity_delta
    SELECT e.project_id, e.profile_id, (e.created_at AT TIME ZONE z.timezone)::date,
      count(*)::integer, (count(*) FILTER (WHERE e.profile_id <> e.device_id))::integer
    FROM events e JOIN activity_zones z ON z.project_id = e.project_id AND NOT z.rebuilt
    WHERE e.ingest_xid >= from_xid AND e.ingest_xid < next_xid
    GROUP BY 1, 2, 3;
  END IF;
  IF EXISTS (SELECT 1 FROM activity_zones WHERE rebuilt) THEN
    EXECUTE format('INSERT INTO activity_delta SELECT e.project_id, e.profile_id, (e.created_at AT TIME ZONE z.timezone)::date,'
      ' count(*)::integer, (count(*) FILTER (WHERE e.profile_id <> e.device_id))::integer'
      ' FROM activity_zones z JOIN events e ON e.project_id = z.project_id'
      ' WHERE z.rebuilt AND e.ingest_xid < %s AND %s GROUP BY 1, 2, 3', next_xid, rebuilt_projects_only('activity_zones', 'e'));
  END IF;
  CREATE TEMPORARY TABLE activity_profiles ON COMMIT DROP AS
  SELECT DISTINCT project_id, profile_id FROM activity_delta;
  ANALYZE activity_delta, activity_profiles;

  CREATE TEMPORARY TABLE user_day_changes (project_id text, day date, identified boolean, gap smallint,
    last boolean, users integer) ON COMMIT DROP;
  CREATE TEMPORARY TABLE retention_week_changes (project_id text, cohort date, week date, next_week date,
    users integer) ON COMMIT DROP;
  FOREACH sign IN ARRAY ARRAY[-1, 1] LOOP
    IF sign = 1 THEN
      INSERT INTO profile_days AS d (project_id, profile_id, day, events, identified_events)
      SELECT project_id, profile_id, day, events, identified_events FROM activity_delta
      ON CONFLICT (project_id, profile_id, day) DO UPDATE SET
        events = d.events + excluded.events,
        identified_events = d.identified_events + excluded.identified_events;
    END IF;
    -- Each touched profile's days, once over all its days and once over its identified ones: the
    -- gap to the previous day (91 and more: not within the 90 days `days` can span) and whether
    -- there is a later one.
    INSERT INTO user_day_changes
    SELECT project_id, day, identified, least(gap, 91), last, sum(sign)
    FROM (
      SELECT d.project_id, d.day, false AS identified,
        coalesce(d.day - lag(d.day) OVER by_profile, 91) AS gap, lead(d.day) OVER by_profile IS NULL AS last
      FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
      WINDOW by_profile AS (PARTITION BY d.project_id, d.profile_id ORDER BY d.day)
      UNION ALL
      SELECT d.project_id, d.day, true,
        coalesce(d.day - lag(d.day) OVER by_profile, 91), lead(d.day) OVER by_profile IS NULL
      FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
      WHERE d.identified_events > 0
      WINDOW by_profile AS (PARTITION BY d.project_id, d.profile_id ORDER BY d.day)
    ) AS days
    GROUP BY 1, 2, 3, 4, 5;
    -- Each touched profile's Monday weeks with an identified event: its cohort (the first) and the
    -- next one.
    INSERT INTO retention_week_changes
    SELECT project_id, cohort, week, next_week, sum(sign)
    FROM (
      SELECT project_id, week, min(week) OVER by_profile AS cohort, lead(week) OVER by_profile AS next_week
      FROM (
        SELECT DISTINCT d.project_id, d.profile_id, d.day - (extract(isodow FROM d.day)::integer - 1) AS week
        FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
        WHERE d.identified_events > 0
      ) AS active_weeks
      WINDOW by_profile AS (PARTITION BY project_id, profile_id ORDER BY week)
    ) AS weeks
    GROUP BY 1, 2, 3, 4;
  END LOOP;

  INSERT INTO active_user_days AS a (project_id, day, identified, gap, last, users)
  SELECT project_id, day, identified, gap, last, sum(users) FROM user_day_changes
  GROUP BY 1, 2, 3, 4, 5 HAVING sum(users) <> 0
  ON CONFLICT (project_id, identified, day, gap, last) DO UPDATE SET users = a.users + excluded.users;
  DELETE FROM active_user_days a USING user_day_changes c
  WHERE a.users = 0 AND a.project_id = c.project_id AND a.identified = c.identified AND a.day = c.day
    AND a.gap = c.gap AND a.last = c.last;
  INSERT INTO retention_weeks AS r (project_id, cohort, week, next_week, users)
  SELECT project_id, cohort, week, next_week, sum(users) FROM retention_week_changes
  GROUP BY 1, 2, 3, 4 HAVING sum(users) <> 0
  ON CONFLICT (project_id, cohort, week, next_week) DO UPDATE SET users = r.users + excluded.users;
  DELETE FROM retention_weeks r USING retention_week_changes c
  WHERE r.users = 0 AND r.project_id = c.project_id AND r.cohort = c.cohort AND r.week = c.week
    AND r.next_week IS NOT DISTINCT FROM c.next_week;

  IF from_xid = 0 THEN
    ANALYZE profile_days, active_user_days, retention_weeks;
  END IF;
  INSERT INTO activity_timezones (project_id, timezone)
  SELECT project_id, timezone FROM activity_zones
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE activity_timezones.timezone IS DISTINCT FROM excluded.timezone;
  UPDATE derived_state SET processed_xid = next_xid, last_run_at = now() WHERE name = 'activity';
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
-- refresh_session_bits(rebuild_all): the bit strings per project day over the day's sessions
-- (session_day_bits, session_day_slices, and per page page_day_bits, page_day_slices) and over the
-- project's visitors (visitor_ordinals, visitor_day_bits, visitor_day_mixed) of the sessions
-- refresh_session_rollups (src/db/routines/refresh_session_rollups.sql) has just derived. It calls
-- this after the day rollups and before it records each project's timezone in rollup_timezones,
-- with the temporary tables `touched_after` (the sessions of this run as it wrote them) and
-- `touched_before` (their rows as they were before this run; none for new sessions).
--
-- A day is the project's own (its timezone, UTC when it has none). Its sessions are numbered 0…
-- (session_day_ordinals), and every string of the day has a bit per number: one per value of each
-- dimension of session_dimensions() (src/db/routines/session_dimensions.sql), empty strings and
-- NULL alike as "not set" (name NULL), one per path its events carry and per event name it holds
-- (dimensions 'path' and 'name', as in the rollups), one per origin its events carry (dimension
-- 'origin', which only the strings have), and for paths and origins one (name NULL) of the
-- sessions with an event without one, and one per set bit of each summed measure. Each page
-- screened that day has one string per title its sessions give it and one per set bit of each
-- page measure of its sessions.
--
-- Visitors are numbered per project in the order they were first seen, once (visitor_ordinals).
-- A day's visitor strings set the bits of the visitors with a session of each value, in chunks of
-- 65,536 visitors, a chunk stored only when it has one. The visitors with several values of a
-- dimension in one day are listed (visitor_day_mixed) for the query to check; for a path, an
-- origin or an event name, those of whose sessions of the day some have the value and some do not.
--
-- A full build (`rebuild_all`), and a project whose timezone changed, numbers each day's sessions
-- in start order (then id, in byte order) and writes every string. Otherwise a session keeps its
-- number while it stays in its day; a new one, or one that a late earlier event moved to another
-- day, takes the next number of its day (its old number is left unset). So a run sets again only
-- the bits of the sessions it touched, and the visitor bits of their visitors in those days
-- (recounted from all of those visitors' sessions there): the sessions of the day are not read
-- again. The strings of a day it writes are still rewritten whole, as they grow with the day.
-- At 27,000 sessions a day (10M events over 90 days) a day's session strings are about 3.4 KB each.
CREATE OR REPLACE FUNCTION refresh_session_bits(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['bit_zones', 'bit_moves', 'bit_days', 'bit_visitors', 'bit_sessions',
    'bit_values', 'bit_pages', 'bit_repeats', 'bit_chunks'];
  chunk_bits constant integer := 65536;
  day_tables constant text[] := ARRAY['session_day_bits', 'session_day_slices', 'page_day_bits', 'page_day_slices',
    'visitor_day_bits', 'visitor_day_mixed', 'session_day_ordinals'];
  day_table text;
  -- The columns of a session that the strings read, as `s`, with its visitor's number. The number
  -- is looked up per session: joined, the planner read every session of the project against every
  -- visitor before it kept a day's (6 s of a 9.6 s run at 10M events).
  session_columns text := '(SELECT o.ordinal FROM visitor_ordinals o WHERE o.project_id = s.project_id AND o.profile_id = s.profile_id) AS visitor,'
    ' s.id AS session_id, s.started_at, s.is_bounce, s.duration_ms, s.screen_view_count, s.revenue'
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') AS %1$I', d.dimension), '') FROM session_dimensions() AS d);
  -- One group per (day, value) of each dimension, the paths and names too: the ordinals of its sessions.
  value_groups text := (SELECT string_agg(format('SELECT project_id, day, %1$L AS dimension, %1$I AS name,'
      ' %2$s AS prefix, array_agg(ordinal) AS ordinals FROM bit_sessions GROUP BY 1, 2, 4, 5',
      d.dimension, coalesce(quote_ident(d.prefix), 'NULL::text')), ' UNION ALL ')
    FROM session_dimensions() AS d)
    || ' UNION ALL SELECT project_id, day, dimension, name, NULL::text, array_agg(ordinal) FROM bit_values GROUP BY 1, 2, 3, 4';
  -- One group per (day, value, chunk) of each dimension: its visitors' offsets in the chunk.
  visitor_groups text := (SELECT string_agg(format('SELECT project_id, day, %1$L AS dimension, %1$I AS name,'
      ' visitor / %2$s AS chunk, array_agg(DISTINCT visitor %% %2$s) AS ordinals FROM bit_sessions GROUP BY 1, 2, 4, 5',
      d.dimension, chunk_bits), ' UNION ALL ')
    FROM session_dimensions() AS d)
    || format(' UNION ALL SELECT project_id, day, dimension, name, visitor / %1$s, array_agg(DISTINCT visitor %% %1$s)'
      ' FROM bit_values GROUP BY 1, 2, 3, 4, 5', chunk_bits);
  -- The visitors of a day with more than one value of a dimension, NULL (not set) one of them.
  mixed_visitors text := (SELECT string_agg(format('SELECT project_id, day, %1$L AS dimension, visitor,'
      ' max(visitor_sessions) FROM bit_repeats GROUP BY 1, 2, 4 HAVING count(DISTINCT %1$I) + max((%1$I IS NULL)::integer) > 1', d.dimension), ' UNION ALL ')
    FROM session_dimensions() AS d);
  merging boolean := NOT rebuild_all;
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Each project's zone, and whether all of its days are rebuilt (src/db/routines/derived_zones.sql).
  CREATE TEMPORARY TABLE bit_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  ANALYZE bit_zones;

  IF rebuild_all THEN
    TRUNCATE session_day_bits, session_day_slices, page_day_bits, page_day_slices, visitor_ordinals, visitor_day_bits,
      visitor_day_mixed, session_day_ordinals;
  ELSE
    FOREACH day_table IN ARRAY day_tables LOOP
      EXECUTE format('DELETE FROM %I b USING bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND ', day_table)
        || rebuilt_projects_only('bit_zones', 'b');
    END LOOP;
  END IF;

  -- Visitors not numbered yet (all of them on a full build) take the next numbers, in the order
  -- they were first seen.
  INSERT INTO visitor_ordinals (project_id, profile_id, ordinal)
  WITH new_visitors AS MATERIALIZED (
    SELECT s.project_id, s.profile_id, min(s.started_at) AS first_seen
    FROM (SELECT project_id, profile_id, started_at FROM sessions WHERE rebuild_all
      UNION ALL SELECT project_id, profile_id, started_at FROM touched_after WHERE NOT rebuild_all) AS s
    WHERE NOT EXISTS (SELECT 1 FROM visitor_ordinals v WHERE v.project_id = s.project_id AND v.profile_id = s.profile_id)
    GROUP BY 1, 2
  ),
  -- Each project's last number, looked up once: asked per new visitor, the planner (with no
  -- statistics for a table this run emptied) scanned the growing table each time.
  numbered AS MATERIALIZED (
    SELECT p.project_id, (SELECT max(v.ordinal) FROM visitor_ordinals v WHERE v.project_id = p.project_id) AS last
    FROM (SELECT DISTINCT project_id FROM new_visitors) AS p
  )
  SELECT n.project_id, n.profile_id,
    coalesce(b.last, -1) + row_number() OVER (PARTITION BY n.project_id ORDER BY n.first_seen, n.profile_id COLLATE "C")
  FROM new_visitors n JOIN numbered b ON b.project_id = n.project_id;

  -- The sessions of the projects built whole, numbered per day in start order.
  EXECUTE 'CREATE TEMPORARY TABLE bit_sessions ON COMMIT DROP AS SELECT s.project_id,'
    ' date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' (row_number() OVER (PARTITION BY s.project_id, date_trunc(''day'', s.started_at, z.timezone)'
    ' ORDER BY s.started_at, s.id COLLATE "C") - 1)::integer AS ordinal, ' || session_columns
    || ' FROM bit_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt AND '
    || rebuilt_projects_only('bit_zones', 's');
  INSERT INTO session_day_ordinals (project_id, session_id, day, ordinal)
  SELECT project_id, session_id, day, ordinal FROM bit_sessions;
  -- Their days: as many bits as sessions, none stored before.
  CREATE TEMPORARY TABLE bit_days ON COMMIT DROP AS
  SELECT project_id, day, count(*)::integer AS size, NULL::bit varying AS cleared FROM bit_sessions GROUP BY 1, 2;

  -- The other projects' touched sessions: their day and number before this run (none for a new
  -- one), their day now, and their visitor then and now.
  CREATE TEMPORARY TABLE bit_moves ON COMMIT DROP AS
  SELECT a.project_id, a.id AS session_id, a.started_at, date_trunc('day', a.started_at, z.timezone) AS day,
    a.profile_id, o.day AS old_day, o.ordinal AS old_ordinal, b.profile_id AS old_profile_id, NULL::integer AS ordinal
  FROM touched_after a
  JOIN bit_zones z ON z.project_id = a.project_id AND NOT z.rebuilt
  LEFT JOIN session_day_ordinals o ON o.project_id = a.project_id AND o.session_id = a.id
  LEFT JOIN touched_before b ON b.project_id = a.project_id AND b.id = a.id;
  -- Their days before and now, with one bit past the last number each has given.
  INSERT INTO bit_days (project_id, day, size)
  SELECT d.project_id, d.day,
    coalesce((SELECT max(o.ordinal) + 1 FROM session_day_ordinals o WHERE o.project_id = d.project_id AND o.day = d.day), 0)
  FROM (SELECT project_id, day FROM bit_moves UNION SELECT project_id, old_day FROM bit_moves WHERE old_day IS NOT NULL) AS d;
  ANALYZE bit_moves, bit_days;
  -- A session staying in its day keeps its number; the others take the next ones of their day, in
  -- start order.
  UPDATE bit_moves m SET ordinal = CASE WHEN m.old_day = m.day THEN m.old_ordinal ELSE d.size + n.place - 1 END
  FROM (SELECT project_id, session_id, row_number() OVER (PARTITION BY project_id, day, old_day IS NOT DISTINCT FROM day
      ORDER BY started_at, session_id COLLATE "C")::integer AS place FROM bit_moves) AS n, bit_days d
  WHERE n.project_id = m.project_id AND n.session_id = m.session_id AND d.project_id = m.project_id AND d.day = m.day;
  UPDATE bit_days d SET size = n.last + 1
  FROM (SELECT project_id, day, max(ordinal) AS last FROM bit_moves GROUP BY 1, 2) AS n
  WHERE n.project_id = d.project_id AND n.day = d.day AND n.last + 1 > d.size;
  INSERT INTO session_day_ordinals (project_id, session_id, day, ordinal)
  SELECT project_id, session_id, day, ordinal FROM bit_moves WHERE old_day IS DISTINCT FROM day
  ON CONFLICT (project_id, session_id) DO UPDATE SET day = excluded.day, ordinal = excluded.ordinal;
  -- The bits set anew in the strings stored: the touched sessions' as they were numbered (a new
  -- number was unset until now).
  UPDATE bit_days d SET cleared = ordinal_bits(coalesce((SELECT array_agg(m.old_ordinal) FROM bit_moves m
    WHERE m.project_id = d.project_id AND m.old_day = d.day), '{}'), d.size);

  -- The visitors whose strings of a day are counted again, from all their sessions of that day:
  -- those of the touched sessions, now and before.
  CREATE TEMPORARY TABLE bit_visitors ON COMMIT DROP AS
  SELECT DISTINCT project_id, day, profile_id FROM (
    SELECT project_id, day, profile_id FROM bit_moves
    UNION ALL SELECT project_id, old_day, old_profile_id FROM bit_moves WHERE old_day IS NOT NULL AND old_profile_id IS NOT NULL
  ) AS v;
  ANALYZE bit_visitors;
  -- A session's day is the one it is numbered in: where midnight happens twice (a zone whose
  -- clocks fall back at 01:00), a start in the first pass is numbered in the day that begins at the
  -- second, so the range around the day only narrows the index read.
  EXECUTE 'INSERT INTO bit_sessions SELECT s.project_id, v.day, o.ordinal, ' || session_columns
    || ' FROM bit_visitors v'
    ' JOIN sessions s ON s.project_id = v.project_id AND s.profile_id = v.profile_id'
    ' AND s.started_at >= v.day - interval ''1 day'' AND s.started_at < v.day + interval ''2 days'''
    ' JOIN session_day_ordinals o ON o.project_id = s.project_id AND o.session_id = s.id AND o.day = v.day';
  -- Their chunks of each day, with their bits as a chunk's string: set anew.
  CREATE TEMPORARY TABLE bit_chunks ON COMMIT DROP AS
  SELECT v.project_id, v.day, o.ordinal / chunk_bits AS chunk, ordinal_bits(array_agg(o.ordinal % chunk_bits), chunk_bits) AS cleared
  FROM bit_visitors v JOIN visitor_ordinals o ON o.project_id = v.project_id AND o.profile_id = v.profile_id
  GROUP BY 1, 2, 3;
  ANALYZE bit_sessions, bit_days, bit_chunks;

  -- Each session under each path its pages hold (once, whatever the origin), each origin (once,
  -- whatever the path) and each event name it holds, found through the session's start as the
  -- stored pages and names are indexed. An event without a path or origin ("" or NULL) puts its
  -- session under NULL, so that `isNot`, `doesNotContain` and `isNull` keep it, as they keep an
  -- event without one.
  CREATE TEMPORARY TABLE bit_values ON COMMIT DROP AS
  SELECT DISTINCT s.project_id, s.day, s.ordinal, s.visitor, 'path' AS dimension, nullif(p.path, '') AS name
  FROM bit_sessions s JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at
    AND p.session_id = s.session_id
  UNION ALL
  SELECT DISTINCT s.project_id, s.day, s.ordinal, s.visitor, 'origin', nullif(p.origin, '')
  FROM bit_sessions s JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at
    AND p.session_id = s.session_id
  UNION ALL
  SELECT s.project_id, s.day, s.ordinal, s.visitor, 'name', n.name
  FROM bit_sessions s JOIN session_names n ON n.project_id = s.project_id AND n.started_at = s.started_at
    AND n.session_id = s.session_id AND n.name <> '';

  -- The session and page strings (src/db/routines/write_day_strings.sql).
  PERFORM write_day_strings('session_day_bits', ARRAY['dimension', 'name', 'prefix'], value_groups, merging);
  -- Bit k of each measure, for the k up to the value's highest set bit.
  PERFORM write_day_strings('session_day_slices', ARRAY['measure', 'slice'], $sql$
    SELECT s.project_id, s.day, m.measure, k::smallint AS slice, array_agg(s.ordinal) AS ordinals
    FROM bit_sessions s
    CROSS JOIN LATERAL (VALUES ('bounce', s.is_bounce::integer::bigint), ('timed', (s.duration_ms > 0)::integer::bigint),
      ('duration_ms', greatest(s.duration_ms, 0)), ('screen_views', s.screen_view_count::bigint),
      ('revenue', greatest(s.revenue, 0)), ('refunds', greatest(-s.revenue, 0))) AS m(measure, value)
    CROSS JOIN LATERAL generate_series(0, length(ltrim(m.value::bit(64)::text, '0')) - 1) AS k
    WHERE m.value > 0 AND (m.value >> k) & 1 = 1
    GROUP BY 1, 2, 3, 4 $sql$, merging);
  -- The pages each session screened, found through its start like the paths above.
  CREATE TEMPORARY TABLE bit_pages ON COMMIT DROP AS
  SELECT s.project_id, s.day, s.ordinal, s.is_bounce, p.origin, p.path, p.title, p.views, p.duration_ms, p.timed_views
  FROM bit_sessions s JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at
    AND p.session_id = s.session_id AND p.views > 0;
  PERFORM write_day_strings('page_day_bits', ARRAY['origin', 'path', 'title'],
    'SELECT project_id, day, origin, path, title, array_agg(ordinal) AS ordinals FROM bit_pages GROUP BY 1, 2, 3, 4, 5', merging);
  PERFORM write_day_strings('page_day_slices', ARRAY['origin', 'path', 'measure', 'slice'], $sql$
    SELECT p.project_id, p.day, p.origin, p.path, m.measure, k::smallint AS slice, array_agg(p.ordinal) AS ordinals
    FROM bit_pages p
    CROSS JOIN LATERAL (VALUES ('repeat_views', p.views::bigint - 1), ('bounce', p.is_bounce::integer::bigint),
      ('duration_ms', p.duration_ms), ('timed_views', p.timed_views::bigint)) AS m(measure, value)
    CROSS JOIN LATERAL generate_series(0, length(ltrim(m.value::bit(64)::text, '0')) - 1) AS k
    WHERE m.value > 0 AND (m.value >> k) & 1 = 1
    GROUP BY 1, 2, 3, 4, 5, 6 $sql$, merging);

  -- The visitor strings: on a build inserted; otherwise each stored chunk of a recounted visitor,
  -- with those visitors' bits off, ORed with their bits counted again.
  IF merging THEN
    EXECUTE 'WITH kept AS (DELETE FROM visitor_day_bits b USING bit_chunks c'
      ' WHERE b.project_id = c.project_id AND b.day = c.day AND b.chunk = c.chunk'
      ' RETURNING b.project_id, b.day, b.dimension, b.name, b.chunk, b.visitors & ~c.cleared AS visitors)'
      ' INSERT INTO visitor_day_bits (project_id, day, dimension, name, chunk, visitors)'
      ' SELECT project_id, day, dimension, name, chunk, bit_or(visitors) FROM (SELECT * FROM kept UNION ALL'
      ' SELECT g.project_id, g.day, g.dimension, g.name, g.chunk, ordinal_bits(g.ordinals, ' || chunk_bits || ')'
      ' FROM (' || visitor_groups || ') AS g) AS merged'
      ' GROUP BY 1, 2, 3, 4, 5 HAVING bit_count(bit_or(visitors)) > 0';
    DELETE FROM visitor_day_mixed m USING bit_visitors v, visitor_ordinals o
    WHERE o.project_id = v.project_id AND o.profile_id = v.profile_id
      AND m.project_id = v.project_id AND m.day = v.day AND m.ordinal = o.ordinal;
  ELSE
    EXECUTE 'INSERT INTO visitor_day_bits (project_id, day, dimension, name, chunk, visitors)'
      ' SELECT g.project_id, g.day, g.dimension, g.name, g.chunk, ordinal_bits(g.ordinals, ' || chunk_bits || ')'
      ' FROM (' || visitor_groups || ') AS g';
  END IF;
  -- Only a visitor with two sessions or more in a day can have two values in it. The listed
  -- visitors carry the day ordinals of their sessions, so the query checks them against the day's
  -- matching sessions without reading any session.
  CREATE TEMPORARY TABLE bit_repeats ON COMMIT DROP AS
  SELECT s.*, r.sessions AS visitor_sessions FROM bit_sessions s
  JOIN (SELECT project_id, day, visitor, array_agg(ordinal ORDER BY ordinal) AS sessions FROM bit_sessions
    GROUP BY 1, 2, 3 HAVING count(*) > 1) AS r
    ON r.project_id = s.project_id AND r.day = s.day AND r.visitor = s.visitor;
  EXECUTE 'INSERT INTO visitor_day_mixed (project_id, day, dimension, ordinal, sessions) ' || mixed_visitors;
  -- A path, origin or name that some of a visitor's sessions of the day hold and others do not.
  INSERT INTO visitor_day_mixed (project_id, day, dimension, ordinal, sessions)
  SELECT DISTINCT v.project_id, v.day, v.dimension, v.visitor, r.sessions
  FROM bit_values v
  JOIN (SELECT project_id, day, visitor, max(visitor_sessions) AS sessions FROM bit_repeats GROUP BY 1, 2, 3) AS r
    ON r.project_id = v.project_id AND r.day = v.day AND r.visitor = v.visitor
  GROUP BY v.project_id, v.day, v.dimension, v.name, v.visitor, r.sessions
  HAVING count(*) < cardinality(r.sessions);
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
-- refresh_visitor_sketches(rebuild_all): the visitor sketches per hour and per project day
-- (visitor_sketches, visitor_day_sketches) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this after
-- refresh_rollups, with the temporary tables `touched_after` (the sessions of this run as it wrote them) and
-- `touched_before` (their rows as they were before this run; none for new sessions).
--
-- A sketch cannot forget a visitor, but the union of two sketches is the sketch of the union and
-- adding a visitor twice changes nothing. So:
-- - a new session is merged into the sketches of its hour and its day (insert_visitor_sketches,
--   src/db/routines/insert_visitor_sketches.sql, merges by union);
-- - a session that existed and now has another hour, day or visitor (a late earlier event moved
--   its start or changed its first event) makes its old and new hour and day rebuilt from their
--   sessions;
-- - a session that existed and did not change is counted already and costs nothing;
-- - a full build (`rebuild_all`) builds every hour, and a project whose timezone changed
--   (derived_zones, src/db/routines/derived_zones.sql) gets all of its days rebuilt.
-- A rebuilt day whose two midnights are whole UTC hours is the union of its hours' sketches (the
-- bit_or of their planes, no session hashed again); the days of half-hour zones are built from
-- their sessions. Either way a day holds what date_trunc puts in it, as the new sessions merged
-- below: where midnight happens twice (Havana falls back from 01:00 to 00:00), its first pass
-- belongs to the day that date_trunc starts at the second. The range read starts half a day
-- before the day's key (no zone has fallen back more than 7 hours since 1970) and ends at the next
-- date's midnight as Postgres resolves it (never before the day's end); it only narrows the read.
CREATE OR REPLACE FUNCTION refresh_visitor_sketches(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['sketch_zones', 'sketch_hours', 'sketch_days', 'new_sessions'];
  hour_of constant text := 'date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'')';
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  CREATE TEMPORARY TABLE sketch_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  -- The hours and days rebuilt from their sessions.
  CREATE TEMPORARY TABLE sketch_hours (project_id text, hour timestamptz) ON COMMIT DROP;
  CREATE TEMPORARY TABLE sketch_days (project_id text, day timestamptz, timezone text) ON COMMIT DROP;
  EXECUTE 'INSERT INTO sketch_days SELECT DISTINCT s.project_id, date_trunc(''day'', s.started_at, z.timezone), z.timezone'
    ' FROM sketch_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt AND '
    || rebuilt_projects_only('sketch_zones', 's');

  IF rebuild_all THEN
    TRUNCATE visitor_sketches, visitor_day_sketches;
    PERFORM insert_visitor_sketches('visitor_sketches', ARRAY['hour'],
      format('SELECT s.project_id, %s AS hour, visitor_entry(s.profile_id) AS entry FROM sessions s', hour_of));
  ELSE
    EXECUTE format($sql$
    INSERT INTO sketch_hours
    SELECT DISTINCT s.project_id, h.hour
    FROM touched_before b
    JOIN touched_after s ON s.project_id = b.project_id AND s.id = b.id
    CROSS JOIN LATERAL (VALUES (%1$s), (%2$s)) AS h(hour)
    WHERE %1$s <> %2$s OR b.profile_id IS DISTINCT FROM s.profile_id
    $sql$, replace(hour_of, 's.', 'b.'), hour_of);
    INSERT INTO sketch_days
    SELECT DISTINCT s.project_id, d.day, z.timezone
    FROM touched_before b
    JOIN touched_after s ON s.project_id = b.project_id AND s.id = b.id
    JOIN sketch_zones z ON z.project_id = s.project_id AND NOT z.rebuilt
    CROSS JOIN LATERAL (VALUES (date_trunc('day', b.started_at, z.timezone)), (date_trunc('day', s.started_at, z.timezone))) AS d(day)
    WHERE date_trunc('day', b.started_at, z.timezone) <> date_trunc('day', s.started_at, z.timezone)
      OR b.profile_id IS DISTINCT FROM s.profile_id;
    DELETE FROM visitor_sketches v USING sketch_hours h WHERE v.project_id = h.project_id AND v.hour = h.hour;
    PERFORM insert_visitor_sketches('visitor_sketches', ARRAY['hour'],
      format('SELECT s.project_id, h.hour, visitor_entry(s.profile_id) AS entry FROM sketch_hours h'
        ' JOIN sessions s ON s.project_id = h.project_id AND s.started_at >= h.hour AND s.started_at < h.hour + interval ''1 hour'''));
    -- The new sessions, merged into the sketches of their hour (before the days are built from hours).
    CREATE TEMPORARY TABLE new_sessions ON COMMIT DROP AS
    SELECT s.project_id, s.started_at, s.profile_id
    FROM touched_after s
    WHERE NOT EXISTS (SELECT 1 FROM touched_before b WHERE b.project_id = s.project_id AND b.id = s.id);
    PERFORM insert_visitor_sketches('visitor_sketches', ARRAY['hour'],
      format('SELECT s.project_id, %s AS hour, visitor_entry(s.profile_id) AS entry FROM new_sessions s', hour_of));
  END IF;

  -- The days rebuilt: whole-hour days from their hours, the others from their sessions.
  ANALYZE sketch_days;
  EXECUTE 'DELETE FROM visitor_day_sketches v USING sketch_zones z WHERE v.project_id = z.project_id AND z.rebuilt AND '
    || rebuilt_projects_only('sketch_zones', 'v');
  DELETE FROM visitor_day_sketches v USING sketch_days d WHERE v.project_id = d.project_id AND v.day = d.day;
  -- The next midnight is that of the next local date, not the day's first instant plus a day: a
  -- day without a midnight (a spring change at 00:00, as in America/Santiago) starts at 01:00, and
  -- the day after it at 00:00 again, which adding a day to 01:00 would count in both days.
  CREATE TEMPORARY TABLE whole_hour_days ON COMMIT DROP AS
  SELECT project_id, day, ((day AT TIME ZONE timezone)::date + 1)::timestamp AT TIME ZONE timezone AS next_day, timezone
  FROM sketch_days;
  DELETE FROM whole_hour_days
  WHERE date_trunc('hour', day, 'UTC') <> day OR date_trunc('hour', next_day, 'UTC') <> next_day;
  ANALYZE whole_hour_days;
  INSERT INTO visitor_day_sketches (project_id, day, plane, registers)
  SELECT d.project_id, d.day, v.plane, bit_or(v.registers)
  FROM whole_hour_days d
  JOIN visitor_sketches v ON v.project_id = d.project_id AND v.hour >= d.day - interval '12 hours'
    AND v.hour < d.next_day AND date_trunc('day', v.hour, d.timezone) = d.day
  GROUP BY d.project_id, d.day, v.plane;
  PERFORM insert_visitor_sketches('visitor_day_sketches', ARRAY['day'],
    $$SELECT s.project_id, d.day, visitor_entry(s.profile_id) AS entry
      FROM sketch_days d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day - interval '12 hours'
      AND s.started_at < ((d.day AT TIME ZONE d.timezone)::date + 1)::timestamp AT TIME ZONE d.timezone
      AND date_trunc('day', s.started_at, d.timezone) = d.day
      WHERE NOT EXISTS (SELECT 1 FROM whole_hour_days w WHERE w.project_id = d.project_id AND w.day = d.day)$$);
  PERFORM free_temporary_tables('whole_hour_days');

  IF NOT rebuild_all THEN
    -- The new sessions of the other days, merged into their sketches.
    PERFORM insert_visitor_sketches('visitor_day_sketches', ARRAY['day'],
      $$SELECT s.project_id, date_trunc('day', s.started_at, z.timezone) AS day, visitor_entry(s.profile_id) AS entry
        FROM new_sessions s JOIN sketch_zones z ON z.project_id = s.project_id AND NOT z.rebuilt
        WHERE NOT EXISTS (SELECT 1 FROM sketch_days d WHERE d.project_id = s.project_id
          AND d.day = date_trunc('day', s.started_at, z.timezone))$$);
  END IF;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
