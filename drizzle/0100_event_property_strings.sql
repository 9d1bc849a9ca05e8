-- refresh_event_bits(from_xid, next_xid): the bit strings per project day over the day's events
-- (event_day_bits, with each day's count of numbered events in event_day_sizes), which answer a
-- chart filtered on two or more columns (src/queries/charts/event-bits.ts).
-- refresh_event_pair_rollups (src/db/routines/refresh_event_pair_rollups.sql) calls it under the
-- event rollups' lock and watermarks, with its temporary table `pair_events` of the events between
-- them (every event on the first run): the strings then hold exactly the events below next_xid.
--
-- A day is the project's own (its timezone, UTC when it has none), recorded per project in
-- event_bit_timezones. A project without a record, or whose timezone is not the one recorded, is
-- built whole from all of its events below next_xid; the others add their new events.
--
-- A day's events are numbered 0…: a build numbers them by time; a later run gives its new events
-- the next numbers of their day, in the same order, and never renumbers the others, since events
-- never change. Every string of the day has a bit per number: one per event name and per value of
-- each of the nine chart columns, empty strings and NULL alike as "not set" (name NULL), and one
-- per value of each property path its events hold (dimension `property:` and the path as a JSON
-- array), for the paths within the bounds event_property_day_paths records. A day's
-- strings are cut into blocks of day_block_bits() numbers (src/db/routines/day_block_bits.sql), and
-- a run rewrites only the blocks of the numbers it gave: the block's stored strings are taken out,
-- padded to its new size and ORed with the new bits.
--
-- Beside the strings, event_day_members keeps whose each numbered event is (a hash of its visitor,
-- segment `user`, and of its session, `session`), per page of member_page_events() numbers, for
-- the distinct counts of those chart segments: a run appends its new events' hashes to the day's
-- last page and writes the pages after it.
CREATE OR REPLACE FUNCTION refresh_event_bits(from_xid bigint, next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Groups by hashing; the window below sorts the events once.
SET enable_sort = off
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['event_bit_zones', 'event_bit_events', 'event_bit_blocks', 'event_bit_properties',
    'event_bit_property_paths'];
  -- The columns with strings besides the name: CHART_PAIR_COLUMNS in src/lib/dimensions.ts, held
  -- equal by test/node/routines.test.ts.
  bit_dimensions text[] := ARRAY['country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The columns of `pair_events` or `events` (as `e`) the strings read, with the zone `z`'s day.
  columns text := 'e.project_id COLLATE "default" AS project_id, date_trunc(''day'', e.created_at, z.timezone) AS day,'
    ' e.created_at, e.name COLLATE "default" AS name, e.profile_id, e.session_id, e.properties'
    || (SELECT string_agg(format(', e.%1$I COLLATE "default" AS %1$I', d), '') FROM unnest(bit_dimensions) AS d);
  -- One group per (day, block, value) of the name and of each column: the offsets of its events in the block.
  value_groups text := 'SELECT project_id, day, ordinal / day_block_bits() AS block, ''name'' AS dimension,'
    ' nullif(name, '''') AS name, array_agg(ordinal % day_block_bits()) AS ordinals FROM event_bit_events GROUP BY 1, 2, 3, 5'
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, day, ordinal / day_block_bits(), %1$L,'
      ' nullif(%1$I, ''''), array_agg(ordinal %% day_block_bits()) FROM event_bit_events GROUP BY 1, 2, 3, 5', d), '')
      FROM unnest(bit_dimensions) AS d)
    || ' UNION ALL SELECT p.project_id, p.day, p.ordinal / day_block_bits(), property_dimension(p.path),'
      ' p.value, array_agg(p.ordinal % day_block_bits()) FROM event_bit_properties p JOIN event_bit_property_paths d'
      ' ON d.project_id = p.project_id AND d.path = p.path AND d.day = p.day WHERE d.names IS NOT NULL AND p.value IS NOT NULL'
      ' GROUP BY 1, 2, 3, 4, 5';
  written text := 'SELECT g.project_id, g.day, g.block, g.dimension, g.name, ordinal_bits(g.ordinals, b.size) AS events'
    ' FROM (' || value_groups || ') AS g JOIN event_bit_blocks b ON b.project_id = g.project_id AND b.day = g.day'
    ' AND b.block = g.block';
  rebuild_all boolean := from_xid = 0;
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Each project's zone, and whether its strings are built whole in this run (all of them on the first).
  CREATE TEMPORARY TABLE event_bit_zones ON COMMIT DROP AS
  SELECT ids.project_id, coalesce(p.timezone, 'UTC') AS timezone,
    rebuild_all OR t.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC') AS rebuilt
  FROM (SELECT id AS project_id FROM projects UNION SELECT project_id COLLATE "default" FROM pair_events) AS ids
  LEFT JOIN projects p ON p.id = ids.project_id
  LEFT JOIN event_bit_timezones t ON t.project_id = ids.project_id;
  ANALYZE event_bit_zones;

  IF rebuild_all THEN
    TRUNCATE event_day_bits, event_day_sizes, event_day_members, event_property_day_paths;
  ELSIF EXISTS (SELECT 1 FROM event_bit_zones WHERE rebuilt) THEN
    EXECUTE 'DELETE FROM event_day_bits b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_day_sizes b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_day_members b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_property_day_paths b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
  END IF;

  -- The events to add: the new ones of the projects kept (on the first run every event), and all
  -- of those of the projects built whole, read from `events`. Each with its project day and number:
  -- the day's count so far, then its place among them by time.
  EXECUTE format('CREATE TEMPORARY TABLE event_bit_events ON COMMIT DROP AS SELECT n.*, coalesce(s.size, 0) - 1'
      ' + row_number() OVER (PARTITION BY n.project_id, n.day ORDER BY n.created_at)::integer AS ordinal FROM ('
      'SELECT %1$s FROM pair_events e JOIN event_bit_zones z ON z.project_id = e.project_id COLLATE "default"%2$s',
      columns, CASE WHEN rebuild_all THEN '' ELSE ' WHERE NOT z.rebuilt' END)
    || CASE WHEN rebuild_all OR NOT EXISTS (SELECT 1 FROM event_bit_zones WHERE rebuilt) THEN ''
      ELSE format(' UNION ALL SELECT %s FROM event_bit_zones z JOIN events e ON e.project_id = z.project_id'
        ' AND e.ingest_xid < %s WHERE z.rebuilt AND %s', columns, next_xid, rebuilt_projects_only('event_bit_zones', 'e')) END
    || ') AS n LEFT JOIN event_day_sizes s ON s.project_id = n.project_id AND s.day = n.day';
  INSERT INTO event_day_sizes AS s (project_id, day, size)
  SELECT project_id, day, max(ordinal) + 1 FROM event_bit_events GROUP BY 1, 2
  ON CONFLICT (project_id, day) DO UPDATE SET size = excluded.size;
  -- The blocks written, with the bits their strings now have: the day's size past the block's
  -- start, at most a block's, rounded up to whole bytes by ordinal_bits.
  CREATE TEMPORARY TABLE event_bit_blocks ON COMMIT DROP AS
  SELECT b.project_id, b.day, b.block, least(day_block_bits(), s.size - b.block * day_block_bits()) AS size
  FROM (SELECT DISTINCT project_id, day, ordinal / day_block_bits() AS block FROM event_bit_events) AS b
  JOIN event_day_sizes s ON s.project_id = b.project_id AND s.day = b.day;
  ANALYZE event_bit_events, event_bit_blocks;

  -- Each event's property values (property_leaves, src/db/routines/property_leaves.sql; NULL where
  -- it holds an object, an array or a long text), and per (day, path) its values so far
  -- (event_property_day_paths, bounded as the sessions' are: src/db/routines/property_day_bounds.sql).
  -- `marked` says that some event of the day holds what the values do not, so that an operator
  -- which may match its text reads the events.
  CREATE TEMPORARY TABLE event_bit_properties ON COMMIT DROP AS
  SELECT DISTINCT e.project_id, e.day, e.ordinal, l.path, l.value
  FROM event_bit_events e CROSS JOIN LATERAL property_leaves(e.properties) AS l
  WHERE e.properties IS NOT NULL AND e.properties <> '{}'::jsonb;
  CREATE TEMPORARY TABLE event_bit_property_paths ON COMMIT DROP AS
  SELECT * FROM property_day_bounds('event_property_day_paths', 'event_bit_properties');
  -- A path that has just passed a bound leaves its strings of the day.
  DELETE FROM event_day_bits b USING event_bit_property_paths p
  WHERE p.had_strings AND p.names IS NULL AND b.project_id = p.project_id AND b.day = p.day
    AND b.dimension = property_dimension(p.path);
  INSERT INTO event_property_day_paths (project_id, day, path, names, marked)
  SELECT project_id, day, path, names, marked FROM event_bit_property_paths
  ON CONFLICT (project_id, path, day) DO UPDATE SET names = excluded.names, marked = excluded.marked
  WHERE (event_property_day_paths.names, event_property_day_paths.marked) IS DISTINCT FROM (excluded.names, excluded.marked);
  ANALYZE event_bit_properties, event_bit_property_paths;

  -- Written in (project, day, block, value) order, so that a day's strings lie together.
  IF rebuild_all THEN
    EXECUTE 'INSERT INTO event_day_bits (project_id, day, block, dimension, name, events) ' || written || ' ORDER BY 1, 2, 3, 4, 5';
  ELSE
    EXECUTE 'WITH kept AS (DELETE FROM event_day_bits s USING event_bit_blocks b WHERE s.project_id = b.project_id'
        ' AND s.day = b.day AND s.block = b.block RETURNING s.project_id, s.day, s.block, s.dimension, s.name,'
        ' s.events || repeat(''0'', (b.size + 7) / 8 * 8 - length(s.events))::bit varying AS events)'
        ' INSERT INTO event_day_bits (project_id, day, block, dimension, name, events)'
        ' SELECT project_id, day, block, dimension, name, bit_or(events) FROM (SELECT * FROM kept UNION ALL '
      || written || ') AS merged GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5';
  END IF;

  -- Whose the new events are: their numbers follow the day's, so a page's new entries go after
  -- its stored ones.
  INSERT INTO event_day_members AS m (project_id, segment, day, page, members)
  SELECT e.project_id, s.segment, e.day, e.ordinal / member_page_events(),
    array_agg(hashtextextended(CASE s.segment WHEN 'user' THEN e.profile_id ELSE e.session_id END, 0) ORDER BY e.ordinal)
  FROM event_bit_events e CROSS JOIN (VALUES ('user'), ('session')) AS s(segment)
  GROUP BY 1, 2, 3, 4
  ON CONFLICT (project_id, segment, day, page) DO UPDATE SET members = m.members || excluded.members;

  INSERT INTO event_bit_timezones AS t (project_id, timezone)
  SELECT project_id, timezone FROM event_bit_zones WHERE rebuilt
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone;
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
--
-- It has refresh_event_bits (src/db/routines/refresh_event_bits.sql) number the same events per
-- day and set their bits in the strings per day, column and value, in the same days.
CREATE OR REPLACE FUNCTION refresh_event_pair_rollups(from_xid bigint, next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Hash aggregates, with room for those of a full build (as in refresh_event_rollups).
SET work_mem = '256MB'
SET enable_sort = off
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['pair_event_zones', 'pair_events', 'pair_event_groups', 'pair_row_kinds',
    'pair_visitors', 'pair_sessions', 'pair_visitors_combinations', 'pair_sessions_combinations', 'pair_visitors_single',
    'pair_sessions_single', 'pair_visitors_mixed', 'pair_sessions_mixed'];
  -- The columns whose pairs are rolled up, the earlier one of a pair first: CHART_PAIR_COLUMNS in
  -- src/lib/dimensions.ts, held equal by test/node/routines.test.ts.
  pair_dimensions text[] := ARRAY['country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The columns of `rollup_events` or `events` (as `e`) the pairs read, with the zone `z`'s local day.
  columns text := $$e.project_id COLLATE "C" AS project_id, (e.created_at AT TIME ZONE z.timezone)::date AS day,
    e.created_at, e.name COLLATE "C" AS name, e.duration, e.revenue, e.profile_id COLLATE "C" AS profile_id,
    e.session_id COLLATE "C" AS session_id, e.properties$$
    || (SELECT string_agg(format(', e.%1$I COLLATE "C" AS %1$I', d), '') FROM unnest(pair_dimensions) d);
  -- A member's values (below), "not set" as NULL.
  member_values text := (SELECT string_agg(format(', nullif(e.%1$I, '''') COLLATE "C" AS %1$I', d), '')
    FROM unnest(pair_dimensions) d);
  member_keys text := 'project_id, day, name' || (SELECT string_agg(', ' || quote_ident(d), '') FROM unnest(pair_dimensions) d);
  member record;
  day_batch record;
  kind record;
  -- The member rows a statement below counts at most, as whole days (src/db/routines/pair_member_batch_rows.sql).
  batch_rows constant bigint := pair_member_batch_rows();
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
  -- The same events in the bit strings per day over the day's events (src/db/routines/refresh_event_bits.sql).
  PERFORM refresh_event_bits(from_xid, next_xid);

  -- The events per combination of the nine values first (empty strings "not set", like NULL): the
  -- 46 aggregates below then read these groups, a few per hundred events, rather than every event
  -- again. Counts and sums add up, minimums, maximums and the earliest instant compose.
  EXECUTE format('CREATE TEMPORARY TABLE pair_event_groups ON COMMIT DROP AS SELECT project_id, day, name%1$s,'
      ' min(created_at) AS first_at, count(*)::bigint AS events, sum(duration)::bigint AS duration_sum,'
      ' min(duration) AS duration_min, max(duration) AS duration_max, sum(revenue)::bigint AS revenue_sum,'
      ' min(revenue) AS revenue_min, max(revenue) AS revenue_max FROM pair_events e GROUP BY %2$s',
    member_values, member_keys);
  ANALYZE pair_event_groups;
  -- One hash aggregate per kind of row. Each row is added into its group, or starts it.
  EXECUTE 'INSERT INTO event_pair_rollups AS r (project_id, day, name, dimension, value, by_dimension, by_value,'
      ' first_at, events, duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max) '
    || (SELECT string_agg(format('SELECT project_id, day, name, %L, %s, %L, %s, min(first_at), sum(events),'
        ' sum(duration_sum), min(duration_min), max(duration_max), sum(revenue_sum), min(revenue_min), max(revenue_max)'
        ' FROM pair_event_groups GROUP BY 1, 2, 3, 5, 7', k.dimension, k.value_sql, k.by_dimension, k.by_value_sql),
        ' UNION ALL ' ORDER BY k.ordinal) FROM pair_row_kinds k)
    || ' ON CONFLICT ON CONSTRAINT event_pair_rollups_key DO UPDATE SET first_at = least(r.first_at, excluded.first_at),'
      ' events = r.events + excluded.events, duration_sum = r.duration_sum + excluded.duration_sum,'
      ' duration_min = least(r.duration_min, excluded.duration_min), duration_max = greatest(r.duration_max, excluded.duration_max),'
      ' revenue_sum = r.revenue_sum + excluded.revenue_sum, revenue_min = least(r.revenue_min, excluded.revenue_min),'
      ' revenue_max = greatest(r.revenue_max, excluded.revenue_max)';
  PERFORM free_temporary_tables('pair_event_groups');

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
  -- and values that day are new. A member of one combination of values that day (every session, and
  -- a visitor whose sessions of the day share their values: most of them) counts in each kind's row
  -- of those values when it is fresh, so those are counted per combination, once for every kind:
  -- the 46 kinds then read a row per combination instead of a row per member. With the events
  -- grouped the same way above, the routine took 2.8 s a run at 1,000 events/s instead of 6.2 s,
  -- and a first build of 1M events (with the hour rows) 60 s instead of 98 s. The members of
  -- several combinations keep their rows, grouped per member and kind below.
  FOR member IN SELECT * FROM (VALUES ('profile_id', 'pair_visitors'), ('session_id', 'pair_sessions')) AS m(id, members)
  LOOP
    EXECUTE format('CREATE TEMPORARY TABLE %1$s_combinations ON COMMIT DROP AS SELECT project_id, day, name, %2$I,'
        ' count(*) AS combinations FROM %1$I GROUP BY 1, 2, 3, 4', member.members, member.id);
    -- Both in day order: each batch's statements below then read their rows from adjoining pages.
    -- Scattered, a day's 12,000 members at 1M events were spread over 6,000 pages, and reading them
    -- again for every kind of row was most of a first build (79 of 105 s).
    EXECUTE format('CREATE TEMPORARY TABLE %1$s_single ON COMMIT DROP AS SELECT %3$s, count(*)::integer AS members'
        ' FROM %1$I m JOIN %1$s_combinations c USING (project_id, day, name, %2$I)'
        ' WHERE c.combinations = 1 AND m.fresh GROUP BY %3$s ORDER BY day',
      member.members, member.id, member_keys);
    EXECUTE format('CREATE TEMPORARY TABLE %1$s_mixed ON COMMIT DROP AS SELECT m.*'
        ' FROM %1$I m JOIN %1$s_combinations c USING (project_id, day, name, %2$I) WHERE c.combinations > 1 ORDER BY day',
      member.members, member.id);
    PERFORM free_temporary_tables(member.members, member.members || '_combinations');
    EXECUTE format('CREATE INDEX ON %I (day)', member.members || '_single');
    EXECUTE format('CREATE INDEX ON %I (day)', member.members || '_mixed');
    EXECUTE format('ANALYZE %I', member.members || '_single');
    EXECUTE format('ANALYZE %I', member.members || '_mixed');
  END LOOP;

  -- Each such row got its events above, so this only updates. One statement per batch of days and
  -- kind of row: a (row, member) pair is kept per member of several combinations, which for a whole
  -- build can be millions, and a batch's of one kind fit in memory (all at once, per member, they
  -- spilled 15 GB to disk at 10 million events and more). Days join a batch in order until it holds
  -- batch_rows member rows or more (the day that takes it there is its last, so a large day is a
  -- batch of its own); one statement per day instead took 2.0 of a 2.4 s run for 300 events over
  -- 60 days (2,760 statements).
  FOR day_batch IN
    SELECT min(day) AS first_day, max(day) AS last_day
    FROM (SELECT day, ((sum(count(*)) OVER (ORDER BY day))::bigint - count(*)) / batch_rows AS batch
      FROM (SELECT day FROM pair_visitors_single UNION ALL SELECT day FROM pair_visitors_mixed
        UNION ALL SELECT day FROM pair_sessions_single UNION ALL SELECT day FROM pair_sessions_mixed) AS member_rows
      GROUP BY day) AS batched
    GROUP BY batch ORDER BY 1 LOOP
    FOR kind IN SELECT * FROM pair_row_kinds ORDER BY ordinal LOOP
      EXECUTE format('INSERT INTO event_pair_rollups AS r (project_id, day, name, dimension, value, by_dimension,'
          ' by_value, first_at, events, duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max,'
          ' profiles, sessions)'
          ' SELECT project_id, day, name, %1$L, value, %2$L, by_value, now(), 0, 0, 0, 0, 0, 0, 0,'
          ' sum(profiles)::int, sum(sessions)::int FROM ('
          'SELECT project_id, day, name, %3$s AS value, %4$s AS by_value, members AS profiles, 0 AS sessions'
          ' FROM pair_visitors_single WHERE day BETWEEN $1 AND $2 UNION ALL '
          'SELECT project_id, day, name, %3$s, %4$s, 1, 0 FROM pair_visitors_mixed'
          ' WHERE day BETWEEN $1 AND $2 GROUP BY 1, 2, 3, 4, 5, profile_id HAVING bool_and(fresh) UNION ALL '
          'SELECT project_id, day, name, %3$s, %4$s, 0, members FROM pair_sessions_single WHERE day BETWEEN $1 AND $2 UNION ALL '
          'SELECT project_id, day, name, %3$s, %4$s, 0, 1 FROM pair_sessions_mixed'
          ' WHERE day BETWEEN $1 AND $2 GROUP BY 1, 2, 3, 4, 5, session_id HAVING bool_and(fresh)) m GROUP BY 1, 2, 3, 5, 7'
          ' ON CONFLICT ON CONSTRAINT event_pair_rollups_key DO UPDATE SET profiles = r.profiles + excluded.profiles,'
          ' sessions = r.sessions + excluded.sessions',
        kind.dimension, kind.by_dimension, kind.value_sql, kind.by_value_sql) USING day_batch.first_day, day_batch.last_day;
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
-- refresh_event_rollups(next_xid): the hourly event rollups (event_rollups) that /export/charts
-- reads, per project, hour and event name ('' dimension) and per value of each breakdown column;
-- it has refresh_event_pair_rollups add the same events into the rows per local day and pair of
-- values (event_pair_rollups), which answer a chart filtered on one column and split by another.
-- refresh_event_family (src/db/routines/refresh_event_family.sql) calls it with the snapshot xmin
-- it took first, beside the session family (at once on another connection, or before it in
-- refresh_derived()); the seed's loader also calls it on a connection of its own, beside
-- refresh_derived().
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
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['rollup_events'];
  from_xid bigint;
  source text;
  -- The breakdown columns rolled up: CHART_ROLLUP_COLUMNS in src/lib/dimensions.ts lists the
  -- same, and test/node/routines.test.ts holds them equal.
  dimensions text[] := ARRAY['path', 'country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The events' columns with their UTC hour (and the instant, visitor and session, for the day
  -- rows' local days and distinct counts; the properties, for the event strings' property values);
  -- byte-order ("C") keys hash and compare fastest.
  columns text := $$e.project_id COLLATE "C" AS project_id, e.name COLLATE "C" AS name, e.created_at,
    date_bin('1 hour', e.created_at, timestamptz '2000-01-01 00:00:00+00') AS hour, e.duration, e.revenue,
    e.profile_id, e.session_id, e.properties$$
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

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
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
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
