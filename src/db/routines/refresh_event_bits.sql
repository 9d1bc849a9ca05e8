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
-- array), for the paths within the bounds event_property_day_paths records (a path past them
-- keeps its strings of the day until the run after the one that took it past). A day's
-- strings are cut into blocks of day_block_bits() numbers (src/db/routines/day_block_bits.sql), and
-- a run rewrites only the blocks of the numbers it gave: the block's stored strings are taken out,
-- padded to its new size and ORed with the new bits.
--
-- Beside the strings, event_day_members keeps whose each numbered event is (a hash of its visitor,
-- segment `user`, and of its session, `session`), per page of member_page_events() numbers, for
-- the distinct counts of those chart segments: a run appends its new events' hashes to the day's
-- last page and writes the pages after it.
--
-- Per segment, each (day, member) has a representative, its lowest-numbered event of the day,
-- kept in event_day_firsts with its name and its values of the nine columns. Numbers are only
-- appended, so a representative never changes: a run finds each new event's in that table (or
-- makes the group's first new event one), sets the representatives' bits in the day's string
-- `first:<segment>` and, per column (the name too), the bits of the new events whose value there
-- differs from their representative's in `deviant:<segment>` (`name` the column), and keeps each event's
-- representative's number on the same pages as the hashes (event_day_first_pages). A chart of one-day
-- buckets counts a day's members from them (src/queries/charts/event-firsts.ts).
CREATE OR REPLACE FUNCTION refresh_event_bits(from_xid bigint, next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Groups by hashing; the window below sorts the events once.
SET enable_sort = off
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['event_bit_zones', 'event_bit_events', 'event_bit_blocks', 'event_bit_properties',
    'event_bit_property_paths', 'event_bit_member_events', 'event_bit_firsts', 'event_bit_deviants'];
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
      ' ON d.project_id = p.project_id AND d.path = p.path AND d.day = p.day'
      ' WHERE (d.names IS NOT NULL OR d.had_strings) AND p.value IS NOT NULL'
      ' GROUP BY 1, 2, 3, 4, 5'
    -- The representatives this run numbered, and the new events that differ from theirs, per column.
    || ' UNION ALL SELECT project_id, day, number / day_block_bits(), ''first:'' || segment, NULL,'
      ' array_agg(number % day_block_bits()) FROM event_bit_firsts WHERE added GROUP BY 1, 2, 3, 4'
    || ' UNION ALL SELECT project_id, day, ordinal / day_block_bits(), ''deviant:'' || segment, dimension,'
      ' array_agg(ordinal % day_block_bits()) FROM event_bit_deviants GROUP BY 1, 2, 3, 4, 5';
  -- The columns an event may differ in from its representative: the name and the nine.
  deviant_dimensions text[] := ARRAY['name'] || bit_dimensions;
  -- A member's values of those columns, "not set" as NULL, in deviant_dimensions' order.
  value_array text := 'ARRAY[' || (SELECT string_agg(format('nullif(e.%I, '''')', d), ', ')
    FROM unnest(ARRAY['name'] || bit_dimensions) AS d) || ']';
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
    TRUNCATE event_day_bits, event_day_sizes, event_day_members, event_day_firsts, event_day_first_pages,
      event_property_day_paths;
  ELSIF EXISTS (SELECT 1 FROM event_bit_zones WHERE rebuilt) THEN
    EXECUTE 'DELETE FROM event_day_bits b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_day_sizes b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_day_members b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_property_day_paths b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_day_firsts b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('event_bit_zones', 'b');
    EXECUTE 'DELETE FROM event_day_first_pages b USING event_bit_zones z WHERE b.project_id = z.project_id AND z.rebuilt AND '
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

  -- Each new event as its visitor's and as its session's, with its values of the columns.
  EXECUTE 'CREATE TEMPORARY TABLE event_bit_member_events ON COMMIT DROP AS SELECT e.project_id, s.segment, e.day,'
    ' hashtextextended(CASE s.segment WHEN ''user'' THEN e.profile_id ELSE e.session_id END, 0) AS member,'
    ' e.ordinal, ' || value_array || ' AS chart_values'
    ' FROM event_bit_events e CROSS JOIN (VALUES (''user''), (''session'')) AS s(segment)';
  ANALYZE event_bit_member_events;
  -- Each group's representative: the stored one (an index probe per group: a run's groups are few
  -- against the table), else its first new event, which this run adds.
  CREATE TEMPORARY TABLE event_bit_firsts ON COMMIT DROP AS
  SELECT g.project_id, g.segment, g.day, g.member, coalesce(f.number, g.number) AS number,
    coalesce(f.chart_values, m.chart_values) AS chart_values, f.number IS NULL AS added
  FROM (SELECT project_id, segment, day, member, min(ordinal) AS number FROM event_bit_member_events
    GROUP BY 1, 2, 3, 4) AS g
  JOIN event_bit_member_events m ON m.project_id = g.project_id AND m.segment = g.segment AND m.day = g.day
    AND m.ordinal = g.number
  LEFT JOIN LATERAL (SELECT s.number, s.chart_values FROM event_day_firsts s WHERE NOT rebuild_all
    AND s.project_id = g.project_id AND s.segment = g.segment AND s.day = g.day AND s.member = g.member) AS f ON true;
  INSERT INTO event_day_firsts (project_id, segment, day, member, number, chart_values)
  SELECT project_id, segment, day, member, number, chart_values FROM event_bit_firsts WHERE added;
  ANALYZE event_bit_firsts;
  -- The new events whose value of a column differs from their representative's.
  CREATE TEMPORARY TABLE event_bit_deviants ON COMMIT DROP AS
  SELECT m.project_id, m.day, m.ordinal, m.segment, d.dimension
  FROM event_bit_member_events m
  JOIN event_bit_firsts f ON f.project_id = m.project_id AND f.segment = m.segment AND f.day = m.day
    AND f.member = m.member
  CROSS JOIN LATERAL unnest(deviant_dimensions) WITH ORDINALITY AS d(dimension, i)
  WHERE m.chart_values IS DISTINCT FROM f.chart_values AND m.chart_values[d.i] IS DISTINCT FROM f.chart_values[d.i];

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
  -- A path leaves its strings of a day one run after the run that takes it past a bound there,
  -- which still writes them, as the session strings do (src/db/routines/refresh_session_bits.sql).
  DELETE FROM event_day_bits b USING event_bit_property_paths p
  WHERE NOT p.had_strings AND p.names IS NULL AND b.project_id = p.project_id AND b.day = p.day
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
  SELECT project_id, segment, day, ordinal / member_page_events(), array_agg(member ORDER BY ordinal)
  FROM event_bit_member_events GROUP BY 1, 2, 3, 4
  ON CONFLICT (project_id, segment, day, page) DO UPDATE SET members = m.members || excluded.members;
  -- And their representatives' numbers, on the same pages.
  INSERT INTO event_day_first_pages AS m (project_id, segment, day, page, firsts)
  SELECT e.project_id, e.segment, e.day, e.ordinal / member_page_events(), array_agg(f.number ORDER BY e.ordinal)
  FROM event_bit_member_events e
  JOIN event_bit_firsts f ON f.project_id = e.project_id AND f.segment = e.segment AND f.day = e.day
    AND f.member = e.member
  GROUP BY 1, 2, 3, 4
  ON CONFLICT (project_id, segment, day, page) DO UPDATE SET firsts = m.firsts || excluded.firsts;

  INSERT INTO event_bit_timezones AS t (project_id, timezone)
  SELECT project_id, timezone FROM event_bit_zones WHERE rebuilt
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
