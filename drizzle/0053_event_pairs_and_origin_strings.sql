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
    e.created_at, e.name COLLATE "C" AS name, e.duration, e.revenue$$
    || (SELECT string_agg(format(', e.%1$I COLLATE "C" AS %1$I', d), '') FROM unnest(pair_dimensions) d);
BEGIN
  DROP TABLE IF EXISTS pg_temp.pair_event_zones, pg_temp.pair_events;
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

  -- One hash aggregate per pair of columns; empty strings are "not set", like NULL. Each row is
  -- added into its group, or starts it.
  EXECUTE 'INSERT INTO event_pair_rollups AS r (project_id, day, name, dimension, value, by_dimension, by_value,'
      ' first_at, events, duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max) '
    || (SELECT string_agg(format('SELECT project_id, day, name, %L, nullif(%I, ''''), %L, nullif(%I, ''''),'
        ' min(created_at), count(*), sum(duration), min(duration), max(duration), sum(revenue), min(revenue), max(revenue)'
        ' FROM pair_events GROUP BY 1, 2, 3, 5, 7', a.d, a.d, b.d, b.d), ' UNION ALL ' ORDER BY a.i, b.i)
      FROM unnest(pair_dimensions) WITH ORDINALITY AS a(d, i) JOIN unnest(pair_dimensions) WITH ORDINALITY AS b(d, i) ON b.i > a.i)
    || ' ON CONFLICT ON CONSTRAINT event_pair_rollups_key DO UPDATE SET first_at = least(r.first_at, excluded.first_at),'
      ' events = r.events + excluded.events, duration_sum = r.duration_sum + excluded.duration_sum,'
      ' duration_min = least(r.duration_min, excluded.duration_min), duration_max = greatest(r.duration_max, excluded.duration_max),'
      ' revenue_sum = r.revenue_sum + excluded.revenue_sum, revenue_min = least(r.revenue_min, excluded.revenue_min),'
      ' revenue_max = greatest(r.revenue_max, excluded.revenue_max)';

  INSERT INTO event_pair_timezones AS t (project_id, timezone)
  SELECT project_id, timezone FROM pair_event_zones WHERE rebuilt OR unrecorded
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone;
  IF from_xid = 0 THEN
    ANALYZE event_pair_rollups;
  END IF;
END;
$fn$;
--> statement-breakpoint
-- refresh_event_rollups(next_xid): the hourly event rollups (event_rollups) that /export/charts
-- reads, per project, hour and event name ('' dimension) and per value of each breakdown column;
-- it has refresh_event_pair_rollups add the same events into the rows per local day and pair of
-- values (event_pair_rollups), which answer a chart filtered on one column and split by another.
-- refresh_derived (src/db/routines/refresh_derived.sql) calls it in the same transaction as
-- refresh_session_rollups, with the snapshot xmin it took first; the seed's loader also calls it
-- on a connection of its own, beside refresh_derived().
--
-- Unlike sessions, the event rollups have an exact watermark: an hour's rows hold exactly the
-- events of that hour whose ingest_xid is below derived_state('event_rollups'). Every transaction
-- below it had finished when the run began (it is the run's snapshot xmin), so no event can join
-- that set later; a chart adds the events at or above it straight from `events` and is exact at
-- any moment (src/queries/charts/rollups.ts). The first run (watermark 0) builds every hour.
-- Events never change once stored, so a later run aggregates only the events between the two
-- watermarks and adds them into the rows: counts and sums add up, minimums and maximums keep the
-- smaller and the larger. (Recomputing the hours the new events fell in, as this did before,
-- re-read the whole current hour each minute: 5.4 s a run at 1,000 events/s, growing within it.)
CREATE OR REPLACE FUNCTION refresh_event_rollups(next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Hash aggregates, with room for those of a full build: the planner cannot estimate how few
-- (project, hour, name, value) groups there are and would otherwise sort every event per dimension.
SET work_mem = '256MB'
SET enable_sort = off
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  source text;
  -- The breakdown columns rolled up: CHART_ROLLUP_COLUMNS in src/lib/dimensions.ts lists the
  -- same, and test/node/routines.test.ts holds them equal.
  dimensions text[] := ARRAY['path', 'country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The events' columns with their UTC hour (and instant, for the pairs' local days); byte-order
  -- ("C") keys hash and compare fastest.
  columns text := $$e.project_id COLLATE "C" AS project_id, e.name COLLATE "C" AS name, e.created_at,
    date_bin('1 hour', e.created_at, timestamptz '2000-01-01 00:00:00+00') AS hour, e.duration, e.revenue$$
    || (SELECT string_agg(format(', e.%1$I COLLATE "C" AS %1$I', d), '') FROM unnest(dimensions) d);
  aggregates text := 'count(*), sum(duration), min(duration), max(duration), sum(revenue), min(revenue), max(revenue)';
BEGIN
  -- One build at a time, also when a loader calls this beside refresh_derived(): a caller that
  -- waited here reads the watermark the other one committed and finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_event_rollups'));
  INSERT INTO derived_state (name) VALUES ('event_rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'event_rollups';
  IF from_xid >= next_xid THEN
    RETURN;
  END IF;

  DROP TABLE IF EXISTS pg_temp.rollup_events;
  -- The events between the two watermarks (found through the ingest_xid BRIN index), or every event
  -- on the first run, copied narrow once: the aggregates below and the pairs' each read them.
  IF from_xid = 0 THEN
    TRUNCATE event_rollups;
  END IF;
  EXECUTE format('CREATE TEMPORARY TABLE rollup_events ON COMMIT DROP AS SELECT %s FROM events e'
    ' WHERE e.ingest_xid >= %s AND e.ingest_xid < %s', columns, from_xid, next_xid);
  ANALYZE rollup_events;
  source := 'rollup_events';

  -- Per hour and event name ('' dimension), and per value of each breakdown column. One hash
  -- aggregate per dimension: grouping sets sort the events once per set, several times slower.
  -- Empty strings are "not set", like NULL (the charts' breakdown rule). Each row is added into
  -- its group, or starts it.
  EXECUTE format('INSERT INTO event_rollups AS r (project_id, hour, name, dimension, value, events,'
      ' duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max)'
      ' SELECT project_id, hour, name, '''', NULL, %s FROM %s GROUP BY 1, 2, 3', aggregates, source)
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, hour, name, %L, nullif(%I, ''''), %s FROM %s GROUP BY 1, 2, 3, 5',
      d, d, aggregates, source), '') FROM unnest(dimensions) d)
    || ' ON CONFLICT ON CONSTRAINT event_rollups_key DO UPDATE SET events = r.events + excluded.events,'
      ' duration_sum = r.duration_sum + excluded.duration_sum, duration_min = least(r.duration_min, excluded.duration_min),'
      ' duration_max = greatest(r.duration_max, excluded.duration_max), revenue_sum = r.revenue_sum + excluded.revenue_sum,'
      ' revenue_min = least(r.revenue_min, excluded.revenue_min), revenue_max = greatest(r.revenue_max, excluded.revenue_max)';

  -- The same events per local day, event name and pair of values (src/db/routines/
  -- refresh_event_pair_rollups.sql), under the same watermark.
  PERFORM refresh_event_pair_rollups(from_xid, next_xid);

  IF from_xid = 0 THEN
    ANALYZE event_rollups;
  END IF;
  UPDATE derived_state SET processed_xid = next_xid, last_run_at = now() WHERE name = 'event_rollups';
END;
$fn$;
--> statement-breakpoint
-- refresh_session_bits(rebuild_all): the bit strings per project day over the day's sessions
-- (session_day_bits, session_day_slices, and per page page_day_bits, page_day_slices) and over the project's visitors (visitor_ordinals,
-- visitor_day_bits, visitor_day_mixed) of the sessions refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) has just derived. It calls this after the day
-- rollups and before it records each project's timezone in rollup_timezones, with the temporary
-- tables `touched_after` (the sessions of this run as it wrote them) and `touched_before` (their
-- rows as they were before this run; none for new sessions).
--
-- A day is the project's own (its timezone, UTC when it has none). Its sessions are numbered 0…
-- in start order (then id, in byte order), and every string of the day has a bit per session: one
-- per value of each dimension of session_dimensions() (src/db/routines/session_dimensions.sql),
-- empty strings and NULL alike as "not set" (name NULL), one per path its events carry and per
-- event name it holds (dimensions 'path' and 'name', as in the rollups), one per origin its events
-- carry (dimension 'origin', which only the strings have), and for paths and origins one (name
-- NULL) of the sessions with an event without one,
-- and one per set bit of each summed measure. Each page screened that day has one string per
-- title its sessions give it and one per set bit of each page measure of its sessions.
--
-- Visitors are numbered per project in the order they were first seen, once (visitor_ordinals).
-- A day's visitor strings set the bits of the visitors with a session of each value, in chunks of
-- 65,536 visitors, a chunk stored only when it has one. The visitors with several values of a
-- dimension in one day are listed (visitor_day_mixed) for the query to check; for a path, an
-- origin or an event name, those of whose sessions of the day some have the value and some do not.
--
-- A touched day is rebuilt whole: a session that arrives late in a day's order (a late earlier
-- event) renumbers the sessions after it, so no string of that day can be kept. A day of a project
-- whose timezone changed, and every day on a full build (`rebuild_all`), is rebuilt too. At 27,000
-- sessions a day (10M events over 90 days) a day's session strings are about 3.4 KB each.
CREATE OR REPLACE FUNCTION refresh_session_bits(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  chunk_bits constant integer := 65536;
  day_tables constant text[] := ARRAY['session_day_bits', 'session_day_slices', 'page_day_bits', 'page_day_slices',
    'visitor_day_bits', 'visitor_day_mixed'];
  day_table text;
  -- The sessions of the days to build, numbered per day, with their visitor's number; %1$s is the
  -- FROM clause that yields them as `s` with their project's zone as `z`, %2$s its condition. The
  -- number is looked up per session: joined, the planner read every session of the project
  -- against every visitor before it kept a day's (6 s of a 9.6 s run at 10M events).
  sessions_of text := 'SELECT s.project_id, date_trunc(''day'', s.started_at, z.timezone) AS day,'
    ' (row_number() OVER (PARTITION BY s.project_id, date_trunc(''day'', s.started_at, z.timezone)'
    ' ORDER BY s.started_at, s.id COLLATE "C") - 1)::integer AS ordinal,'
    ' (SELECT o.ordinal FROM visitor_ordinals o WHERE o.project_id = s.project_id AND o.profile_id = s.profile_id) AS visitor,'
    ' s.id AS session_id, s.started_at, s.is_bounce, s.duration_ms, s.screen_view_count, s.revenue'
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') AS %1$I', d.dimension), '') FROM session_dimensions() AS d)
    || ' FROM %1$s WHERE %2$s';
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
BEGIN
  DROP TABLE IF EXISTS pg_temp.bit_zones, pg_temp.bit_days, pg_temp.bit_sessions, pg_temp.bit_day_sizes,
    pg_temp.bit_values, pg_temp.bit_pages, pg_temp.bit_repeats;
  -- Each project's zone, and whether all of its days are rebuilt (src/db/routines/derived_zones.sql).
  CREATE TEMPORARY TABLE bit_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  -- The other projects' days that a touched session was in, before this run or now.
  CREATE TEMPORARY TABLE bit_days ON COMMIT DROP AS
  SELECT DISTINCT z.project_id, date_trunc('day', t.started_at, z.timezone) AS day
  FROM (SELECT project_id, started_at FROM touched_before UNION ALL SELECT project_id, started_at FROM touched_after) AS t
  JOIN bit_zones z ON z.project_id = t.project_id AND NOT z.rebuilt;
  -- Planned without statistics as a thousand days, the day's sessions were read by a merge join
  -- from the day to the end of the project's data.
  ANALYZE bit_zones, bit_days;

  IF rebuild_all THEN
    TRUNCATE session_day_bits, session_day_slices, page_day_bits, page_day_slices, visitor_ordinals, visitor_day_bits,
      visitor_day_mixed;
  ELSE
    -- Every string table per day: all days of the projects rebuilt whole, the touched days of the others.
    FOREACH day_table IN ARRAY day_tables LOOP
      EXECUTE format('DELETE FROM %I b USING bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt', day_table);
      EXECUTE format('DELETE FROM %I b USING bit_days d WHERE b.project_id = d.project_id AND b.day = d.day', day_table);
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

  EXECUTE 'CREATE TEMPORARY TABLE bit_sessions ON COMMIT DROP AS '
    || format(sessions_of, 'bit_zones z JOIN sessions s ON s.project_id = z.project_id', 'z.rebuilt')
    || ' UNION ALL ' || format(sessions_of, 'bit_days d JOIN bit_zones z ON z.project_id = d.project_id'
    ' JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day'
    ' AND s.started_at < ((d.day AT TIME ZONE z.timezone)::date + 1)::timestamp AT TIME ZONE z.timezone', 'true');
  CREATE TEMPORARY TABLE bit_day_sizes ON COMMIT DROP AS
  SELECT project_id, day, count(*)::integer AS sessions FROM bit_sessions GROUP BY 1, 2;
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

  EXECUTE 'INSERT INTO session_day_bits (project_id, day, dimension, name, prefix, sessions)'
    ' SELECT g.project_id, g.day, g.dimension, g.name, g.prefix, ordinal_bits(g.ordinals, n.sessions)'
    ' FROM (' || value_groups || ') AS g JOIN bit_day_sizes n ON n.project_id = g.project_id AND n.day = g.day';

  -- Bit k of each measure, for the k up to the value's highest set bit.
  INSERT INTO session_day_slices (project_id, day, measure, slice, sessions)
  SELECT g.project_id, g.day, g.measure, g.slice, ordinal_bits(g.ordinals, n.sessions)
  FROM (
    SELECT s.project_id, s.day, m.measure, k AS slice, array_agg(s.ordinal) AS ordinals
    FROM bit_sessions s
    CROSS JOIN LATERAL (VALUES ('bounce', s.is_bounce::integer::bigint), ('timed', (s.duration_ms > 0)::integer::bigint),
      ('duration_ms', greatest(s.duration_ms, 0)), ('screen_views', s.screen_view_count::bigint),
      ('revenue', greatest(s.revenue, 0)), ('refunds', greatest(-s.revenue, 0))) AS m(measure, value)
    CROSS JOIN LATERAL generate_series(0, length(ltrim(m.value::bit(64)::text, '0')) - 1) AS k
    WHERE m.value > 0 AND (m.value >> k) & 1 = 1
    GROUP BY 1, 2, 3, 4
  ) AS g
  JOIN bit_day_sizes n ON n.project_id = g.project_id AND n.day = g.day;

  -- The pages each session screened, found through its start like the paths above.
  CREATE TEMPORARY TABLE bit_pages ON COMMIT DROP AS
  SELECT s.project_id, s.day, s.ordinal, s.is_bounce, p.origin, p.path, p.title, p.views, p.duration_ms, p.timed_views
  FROM bit_sessions s JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at
    AND p.session_id = s.session_id AND p.views > 0;
  INSERT INTO page_day_bits (project_id, day, origin, path, title, sessions)
  SELECT g.project_id, g.day, g.origin, g.path, g.title, ordinal_bits(g.ordinals, n.sessions)
  FROM (SELECT project_id, day, origin, path, title, array_agg(ordinal) AS ordinals FROM bit_pages GROUP BY 1, 2, 3, 4, 5) AS g
  JOIN bit_day_sizes n ON n.project_id = g.project_id AND n.day = g.day;
  INSERT INTO page_day_slices (project_id, day, origin, path, measure, slice, sessions)
  SELECT g.project_id, g.day, g.origin, g.path, g.measure, g.slice, ordinal_bits(g.ordinals, n.sessions)
  FROM (
    SELECT p.project_id, p.day, p.origin, p.path, m.measure, k AS slice, array_agg(p.ordinal) AS ordinals
    FROM bit_pages p
    CROSS JOIN LATERAL (VALUES ('repeat_views', p.views::bigint - 1), ('bounce', p.is_bounce::integer::bigint),
      ('duration_ms', p.duration_ms), ('timed_views', p.timed_views::bigint)) AS m(measure, value)
    CROSS JOIN LATERAL generate_series(0, length(ltrim(m.value::bit(64)::text, '0')) - 1) AS k
    WHERE m.value > 0 AND (m.value >> k) & 1 = 1
    GROUP BY 1, 2, 3, 4, 5, 6
  ) AS g
  JOIN bit_day_sizes n ON n.project_id = g.project_id AND n.day = g.day;

  EXECUTE 'INSERT INTO visitor_day_bits (project_id, day, dimension, name, chunk, visitors)'
    ' SELECT g.project_id, g.day, g.dimension, g.name, g.chunk, ordinal_bits(g.ordinals, ' || chunk_bits || ')'
    ' FROM (' || visitor_groups || ') AS g';
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
END;
$fn$;
--> statement-breakpoint
-- Build the pair rows of every stored event, and the event rollups again with them (one watermark).
UPDATE derived_state SET processed_xid = 0 WHERE name = 'event_rollups';
--> statement-breakpoint
SELECT refresh_event_rollups((pg_snapshot_xmin(pg_current_snapshot())::text)::bigint);
--> statement-breakpoint
-- The origin strings and the strings of "no path" and "no origin" are new: build the bit strings
-- per day now, and only them, as 0050 did. The refresh's temporary tables may be left from an
-- earlier migration of the same run.
DROP TABLE IF EXISTS pg_temp.touched_before, pg_temp.touched_after;
--> statement-breakpoint
CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
--> statement-breakpoint
CREATE TEMPORARY TABLE touched_after ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
--> statement-breakpoint
SELECT refresh_session_bits(true);
--> statement-breakpoint
DROP TABLE touched_before, touched_after;
