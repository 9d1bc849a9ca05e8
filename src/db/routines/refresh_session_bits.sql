-- refresh_session_bits(rebuild_all): the bit strings per project day over the day's sessions
-- (session_day_bits, session_day_slices, and per page page_day_bits, page_day_slices) and over the
-- project's visitors (visitor_ordinals, visitor_day_bits, visitor_day_mixed) of the sessions that
-- refresh_session_rollups (src/db/routines/refresh_session_rollups.sql) has derived and committed.
-- refresh_session_strings (src/db/routines/refresh_session_strings.sql) calls it in a transaction
-- of its own, with the zones of bit_zones (src/db/routines/session_bit_zones.sql) and the
-- temporary table `string_sessions` (the rows, as stored, of the sessions with events since its
-- last run). What a session was before, the strings keep themselves: its day, number and visitor
-- in session_day_ordinals.
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
-- again. A day's strings are cut into blocks of day_block_bits() numbers
-- (src/db/routines/day_block_bits.sql), and a run rewrites only the blocks of the numbers it
-- touched: at 1,000 events a second a day holds millions of sessions, and the strings it wrote
-- whole grew through the day (60 KB each after half an hour). The newest sessions are in the
-- day's last block; one that ended keeps its block as it is.
CREATE OR REPLACE FUNCTION refresh_session_bits(rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
-- Groups by hashing: sorted, the (page, measure, bit, number) rows of a run compared their paths
-- and origins under the database's collation, 2.5 s of the page slices' 6.8 s in a 1M replay.
SET enable_sort = off
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['bit_zones', 'bit_moves', 'bit_days', 'bit_blocks', 'bit_visitors', 'bit_sessions',
    'bit_values', 'bit_pages', 'bit_repeats', 'bit_chunks', 'bit_properties', 'bit_property_paths'];
  chunk_bits constant integer := 65536;
  day_tables constant text[] := ARRAY['session_day_bits', 'session_day_slices', 'page_day_bits', 'page_day_slices',
    'visitor_day_bits', 'visitor_day_mixed', 'session_day_ordinals', 'property_day_paths'];
  day_table text;
  -- The columns of a session that the strings read, as `s`, with its visitor's number. The number
  -- is looked up per session: joined, the planner read every session of the project against every
  -- visitor before it kept a day's (6 s of a 9.6 s run at 10M events).
  session_columns text := '(SELECT o.ordinal FROM visitor_ordinals o WHERE o.project_id = s.project_id AND o.profile_id = s.profile_id) AS visitor,'
    ' s.id AS session_id, s.started_at, s.is_bounce, s.duration_ms, s.screen_view_count, s.revenue'
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') AS %1$I', d.dimension), '') FROM session_dimensions() AS d);
  -- One group per (day, block, value) of each dimension, the paths and names too: the offsets of its
  -- sessions in the block.
  value_groups text := (SELECT string_agg(format('SELECT project_id, day, ordinal / day_block_bits() AS block, %1$L AS dimension,'
      ' %1$I AS name, %2$s AS prefix, array_agg(ordinal %% day_block_bits()) AS ordinals FROM bit_sessions GROUP BY 1, 2, 3, 5, 6',
      d.dimension, coalesce(quote_ident(d.prefix), 'NULL::text')), ' UNION ALL ')
    FROM session_dimensions() AS d)
    || ' UNION ALL SELECT project_id, day, ordinal / day_block_bits(), dimension, name, NULL::text,'
      ' array_agg(ordinal % day_block_bits()) FROM bit_values GROUP BY 1, 2, 3, 4, 5';
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
  CREATE TEMPORARY TABLE bit_zones ON COMMIT DROP AS SELECT * FROM session_bit_zones(rebuild_all);
  ANALYZE bit_zones;

  IF rebuild_all THEN
    TRUNCATE session_day_bits, session_day_slices, page_day_bits, page_day_slices, visitor_ordinals, visitor_day_bits,
      visitor_day_mixed, session_day_ordinals, property_day_paths;
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
      UNION ALL SELECT project_id, profile_id, started_at FROM string_sessions WHERE NOT rebuild_all) AS s
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
  INSERT INTO session_day_ordinals (project_id, session_id, day, ordinal, visitor)
  SELECT project_id, session_id, day, ordinal, visitor FROM bit_sessions;
  -- Their days: as many bits as sessions, none stored before.
  CREATE TEMPORARY TABLE bit_days ON COMMIT DROP AS
  SELECT project_id, day, count(*)::integer AS size FROM bit_sessions GROUP BY 1, 2;

  -- The other projects' touched sessions: their day and number as the strings hold them (none for
  -- a new one), their day now, and their visitor then (its profile) and now (its number too).
  CREATE TEMPORARY TABLE bit_moves ON COMMIT DROP AS
  SELECT a.project_id, a.id AS session_id, a.started_at, date_trunc('day', a.started_at, z.timezone) AS day,
    a.profile_id, o.day AS old_day, o.ordinal AS old_ordinal,
    (SELECT v.profile_id FROM visitor_ordinals v WHERE v.project_id = a.project_id AND v.ordinal = o.visitor) AS old_profile_id,
    (SELECT v.ordinal FROM visitor_ordinals v WHERE v.project_id = a.project_id AND v.profile_id = a.profile_id) AS visitor,
    o.visitor AS old_visitor, NULL::integer AS ordinal
  FROM string_sessions a
  JOIN bit_zones z ON z.project_id = a.project_id AND NOT z.rebuilt
  LEFT JOIN session_day_ordinals o ON o.project_id = a.project_id AND o.session_id = a.id;
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
  INSERT INTO session_day_ordinals (project_id, session_id, day, ordinal, visitor)
  SELECT project_id, session_id, day, ordinal, visitor FROM bit_moves
  WHERE old_day IS DISTINCT FROM day OR old_visitor IS DISTINCT FROM visitor
  ON CONFLICT (project_id, session_id) DO UPDATE SET day = excluded.day, ordinal = excluded.ordinal, visitor = excluded.visitor;

  -- The blocks written: every block of a day built whole; of the other days, the blocks of the
  -- touched sessions' numbers, now and before, with the bits set anew in the strings stored (the
  -- touched sessions' as they were numbered; a new number was unset until now). The blocks of
  -- sessions that ended before this run are neither read nor written.
  CREATE TEMPORARY TABLE bit_blocks ON COMMIT DROP AS
  SELECT d.project_id, d.day, b.block, least(day_block_bits(), d.size - b.block * day_block_bits()) AS size, NULL::bit varying AS cleared
  FROM bit_days d JOIN bit_zones z ON z.project_id = d.project_id AND z.rebuilt
  CROSS JOIN generate_series(0, (d.size - 1) / day_block_bits()) AS b(block);
  INSERT INTO bit_blocks (project_id, day, block, size, cleared)
  SELECT d.project_id, d.day, t.block, least(day_block_bits(), d.size - t.block * day_block_bits()),
    ordinal_bits(coalesce(array_agg(t.place) FILTER (WHERE t.cleared), '{}'), least(day_block_bits(), d.size - t.block * day_block_bits()))
  FROM (SELECT project_id, day, ordinal / day_block_bits() AS block, ordinal % day_block_bits() AS place, false AS cleared FROM bit_moves
    UNION ALL SELECT project_id, old_day, old_ordinal / day_block_bits(), old_ordinal % day_block_bits(), true FROM bit_moves
    WHERE old_day IS NOT NULL) AS t
  JOIN bit_days d ON d.project_id = t.project_id AND d.day = t.day
  GROUP BY d.project_id, d.day, t.block, d.size;

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
  ANALYZE bit_sessions, bit_blocks, bit_chunks;

  -- Each session's property values (session_properties, its marks left out), once each.
  CREATE TEMPORARY TABLE bit_properties ON COMMIT DROP AS
  SELECT DISTINCT s.project_id, s.day, s.ordinal, s.visitor, p.path, p.value
  FROM bit_sessions s JOIN session_properties p ON p.project_id = s.project_id AND p.started_at = s.started_at
    AND p.session_id = s.session_id AND p.value IS NOT NULL;
  -- The paths met in each day, with their values there so far (property_day_paths): a path past
  -- a bound keeps its strings there only until the run after the one that took it past
  -- (src/db/routines/property_day_bounds.sql; below).
  CREATE TEMPORARY TABLE bit_property_paths ON COMMIT DROP AS
  SELECT * FROM property_day_bounds('property_day_paths', 'bit_properties');
  -- A path leaves its strings of a day one run after the run that takes it past a bound there:
  -- that run still writes them (all of its values), so that a request which found the path within
  -- its bounds just before the run committed, and reads the strings in later statements, reads
  -- them whole. The next run that meets the path in that day deletes them.
  FOREACH day_table IN ARRAY ARRAY['session_day_bits', 'visitor_day_bits', 'visitor_day_mixed'] LOOP
    EXECUTE format('DELETE FROM %I b USING bit_property_paths p WHERE NOT p.had_strings AND p.names IS NULL'
      ' AND b.project_id = p.project_id AND b.day = p.day AND b.dimension = property_dimension(p.path)',
      day_table);
  END LOOP;
  INSERT INTO property_day_paths (project_id, day, path, names)
  SELECT project_id, day, path, names FROM bit_property_paths
  ON CONFLICT (project_id, path, day) DO UPDATE SET names = excluded.names
  WHERE property_day_paths.names IS DISTINCT FROM excluded.names;

  -- Each session under each path its pages hold (once, whatever the origin), each origin (once,
  -- whatever the path) and each event name it holds, found through the session's start as the
  -- stored pages and names are indexed. An event without a path or origin ("" or NULL) puts its
  -- session under NULL, so that `isNot`, `doesNotContain` and `isNull` keep it, as they keep an
  -- event without one. The paths and origins come from one read of the pages (two reads took
  -- 0.6 s of a run at 1,000 events/s).
  CREATE TEMPORARY TABLE bit_values ON COMMIT DROP AS
  SELECT DISTINCT s.project_id, s.day, s.ordinal, s.visitor, v.dimension, v.name
  FROM bit_sessions s JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at
    AND p.session_id = s.session_id
  CROSS JOIN LATERAL (VALUES ('path', nullif(p.path, '')), ('origin', nullif(p.origin, ''))) AS v(dimension, name)
  UNION ALL
  SELECT s.project_id, s.day, s.ordinal, s.visitor, 'name', n.name
  FROM bit_sessions s JOIN session_names n ON n.project_id = s.project_id AND n.started_at = s.started_at
    AND n.session_id = s.session_id AND n.name <> ''
  UNION ALL
  SELECT b.project_id, b.day, b.ordinal, b.visitor, property_dimension(b.path), b.value
  FROM bit_properties b JOIN bit_property_paths p ON p.project_id = b.project_id AND p.day = b.day AND p.path = b.path
  WHERE p.names IS NOT NULL OR p.had_strings;

  -- The session and page strings (src/db/routines/write_day_strings.sql).
  PERFORM write_day_strings('session_day_bits', ARRAY['dimension', 'name', 'prefix'], value_groups, merging);
  -- Bit k of each measure, for the k up to the value's highest set bit.
  PERFORM write_day_strings('session_day_slices', ARRAY['measure', 'slice'], $sql$
    SELECT s.project_id, s.day, s.ordinal / day_block_bits() AS block, m.measure, k::smallint AS slice,
      array_agg(s.ordinal % day_block_bits()) AS ordinals
    FROM bit_sessions s
    CROSS JOIN LATERAL (VALUES ('bounce', s.is_bounce::integer::bigint), ('timed', (s.duration_ms > 0)::integer::bigint),
      ('duration_ms', greatest(s.duration_ms, 0)), ('screen_views', s.screen_view_count::bigint),
      ('revenue', greatest(s.revenue, 0)), ('refunds', greatest(-s.revenue, 0))) AS m(measure, value)
    CROSS JOIN LATERAL generate_series(0, length(ltrim(m.value::bit(64)::text, '0')) - 1) AS k
    WHERE m.value > 0 AND (m.value >> k) & 1 = 1
    GROUP BY 1, 2, 3, 4, 5 $sql$, merging);
  -- The pages each session screened, found through its start like the paths above.
  CREATE TEMPORARY TABLE bit_pages ON COMMIT DROP AS
  SELECT s.project_id, s.day, s.ordinal, s.is_bounce, p.origin, p.path, p.title, p.views, p.duration_ms, p.timed_views
  FROM bit_sessions s JOIN session_pages p ON p.project_id = s.project_id AND p.started_at = s.started_at
    AND p.session_id = s.session_id AND p.views > 0;
  PERFORM write_day_strings('page_day_bits', ARRAY['origin', 'path', 'title'],
    'SELECT project_id, day, ordinal / day_block_bits() AS block, origin, path, title,'
    ' array_agg(ordinal % day_block_bits()) AS ordinals FROM bit_pages GROUP BY 1, 2, 3, 4, 5, 6', merging);
  PERFORM write_day_strings('page_day_slices', ARRAY['origin', 'path', 'measure', 'slice'], $sql$
    SELECT p.project_id, p.day, p.ordinal / day_block_bits() AS block, p.origin, p.path, m.measure, k::smallint AS slice,
      array_agg(p.ordinal % day_block_bits()) AS ordinals
    FROM bit_pages p
    CROSS JOIN LATERAL (VALUES ('repeat_views', p.views::bigint - 1), ('bounce', p.is_bounce::integer::bigint),
      ('duration_ms', p.duration_ms), ('timed_views', p.timed_views::bigint)) AS m(measure, value)
    CROSS JOIN LATERAL generate_series(0, length(ltrim(m.value::bit(64)::text, '0')) - 1) AS k
    WHERE m.value > 0 AND (m.value >> k) & 1 = 1
    GROUP BY 1, 2, 3, 4, 5, 6, 7 $sql$, merging);

  -- The visitor strings: on a build inserted; otherwise each stored chunk of a recounted visitor,
  -- with those visitors' bits off, ORed with their bits counted again. In (project, day, value)
  -- order, as write_day_strings writes the others, so that a day's strings lie together.
  IF merging THEN
    EXECUTE 'WITH kept AS (DELETE FROM visitor_day_bits b USING bit_chunks c'
      ' WHERE b.project_id = c.project_id AND b.day = c.day AND b.chunk = c.chunk'
      ' RETURNING b.project_id, b.day, b.dimension, b.name, b.chunk, b.visitors & ~c.cleared AS visitors)'
      ' INSERT INTO visitor_day_bits (project_id, day, dimension, name, chunk, visitors)'
      ' SELECT project_id, day, dimension, name, chunk, bit_or(visitors) FROM (SELECT * FROM kept UNION ALL'
      ' SELECT g.project_id, g.day, g.dimension, g.name, g.chunk, ordinal_bits(g.ordinals, ' || chunk_bits || ')'
      ' FROM (' || visitor_groups || ') AS g) AS merged'
      ' GROUP BY 1, 2, 3, 4, 5 HAVING bit_count(bit_or(visitors)) > 0 ORDER BY 1, 2, 3, 4, 5';
    DELETE FROM visitor_day_mixed m USING bit_visitors v, visitor_ordinals o
    WHERE o.project_id = v.project_id AND o.profile_id = v.profile_id
      AND m.project_id = v.project_id AND m.day = v.day AND m.ordinal = o.ordinal;
  ELSE
    EXECUTE 'INSERT INTO visitor_day_bits (project_id, day, dimension, name, chunk, visitors)'
      ' SELECT g.project_id, g.day, g.dimension, g.name, g.chunk, ordinal_bits(g.ordinals, ' || chunk_bits || ')'
      ' FROM (' || visitor_groups || ') AS g ORDER BY 1, 2, 3, 4, 5';
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
  -- The zone each project's strings are now in: the one this run used, read at its start (a zone
  -- changed since is a change the next run sees, and rebuilds).
  INSERT INTO session_bit_timezones (project_id, timezone)
  SELECT project_id, timezone FROM bit_zones
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE session_bit_timezones.timezone IS DISTINCT FROM excluded.timezone;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
