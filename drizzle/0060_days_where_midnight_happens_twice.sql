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
    ' JOIN sessions s ON s.project_id = d.project_id AND ' || day_sessions));
  EXECUTE 'CREATE TEMPORARY TABLE dimension_values ON COMMIT DROP AS ' || format(values_of,
    'dimension_days d JOIN dimension_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND ' || day_sessions,
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
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
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
  DROP TABLE IF EXISTS pg_temp.pair_event_zones, pg_temp.pair_events, pg_temp.pair_row_kinds,
    pg_temp.pair_visitors, pg_temp.pair_sessions;
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
    DELETE FROM event_pair_rollups r USING pair_event_zones z WHERE r.project_id = z.project_id AND z.rebuilt;
    EXECUTE format('INSERT INTO pair_events SELECT %s FROM pair_event_zones z JOIN events e'
      ' ON e.project_id = z.project_id AND e.ingest_xid < %s WHERE z.rebuilt', columns, next_xid);
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
      || format(') m GROUP BY %s, %I', member_keys, member.id);
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
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  hour_of constant text := 'date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'')';
BEGIN
  DROP TABLE IF EXISTS pg_temp.sketch_zones, pg_temp.sketch_hours, pg_temp.sketch_days, pg_temp.new_sessions;
  CREATE TEMPORARY TABLE sketch_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  -- The hours and days rebuilt from their sessions.
  CREATE TEMPORARY TABLE sketch_hours (project_id text, hour timestamptz) ON COMMIT DROP;
  CREATE TEMPORARY TABLE sketch_days (project_id text, day timestamptz, timezone text) ON COMMIT DROP;
  INSERT INTO sketch_days
  SELECT DISTINCT s.project_id, date_trunc('day', s.started_at, z.timezone), z.timezone
  FROM sketch_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt;

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
  DELETE FROM visitor_day_sketches v USING sketch_zones z WHERE v.project_id = z.project_id AND z.rebuilt;
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
  DROP TABLE whole_hour_days;

  IF NOT rebuild_all THEN
    -- The new sessions of the other days, merged into their sketches.
    PERFORM insert_visitor_sketches('visitor_day_sketches', ARRAY['day'],
      $$SELECT s.project_id, date_trunc('day', s.started_at, z.timezone) AS day, visitor_entry(s.profile_id) AS entry
        FROM new_sessions s JOIN sketch_zones z ON z.project_id = s.project_id AND NOT z.rebuilt
        WHERE NOT EXISTS (SELECT 1 FROM sketch_days d WHERE d.project_id = s.project_id
          AND d.day = date_trunc('day', s.started_at, z.timezone))$$);
  END IF;
END;
$fn$;
--> statement-breakpoint
-- Rows built before this fix, in projects with a day whose local midnight happens twice: an hour
-- of the first pass comes before the instant Postgres keys its day at. The visitor sketch of such a
-- day and of the day before, rebuilt from their hours, counted that hour in the day before (which
-- may then be the only day with a row), and a later run could count a visitor or session of that
-- hour again in the day's event pair rows. Forgetting the timezone those projects' day rows were
-- built in makes the next refresh_derived() rebuild all of their days (until then their hours
-- answer). Their pair rows are recorded as built in no zone (''): no request reads them, and the
-- next refresh builds them again from their events.
DELETE FROM rollup_timezones z
WHERE EXISTS (
  SELECT 1 FROM visitor_sketches h
  WHERE h.project_id = z.project_id AND date_trunc('day', h.hour, z.timezone) > h.hour
);
--> statement-breakpoint
UPDATE event_pair_timezones t SET timezone = ''
WHERE EXISTS (
  SELECT 1 FROM event_pair_rollups r
  WHERE r.project_id = t.project_id
    AND (((r.day::timestamp AT TIME ZONE t.timezone) - interval '1 second') AT TIME ZONE t.timezone)::date = r.day
);
