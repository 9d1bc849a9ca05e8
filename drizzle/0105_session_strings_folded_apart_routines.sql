-- refresh_derived(): folds the events committed since the last run into every derived table, in
-- one transaction, and returns the number of sessions it recomputed. It is the entry point its
-- callers use on one connection (the seed, the tests, pipelines; the Worker's cron trigger runs its
-- two families at once instead, src/queries/derived.ts): incremental, idempotent, and safe to call
-- at any time and concurrently. It runs the two families and the session strings in turn, each
-- waiting for a run of it under way:
-- - refresh_session_family (src/db/routines/refresh_session_family.sql): sessions, their rollups,
--   pairs and sketches, and the profile summaries;
-- - refresh_session_strings (src/db/routines/refresh_session_strings.sql): the bit strings per day
--   over the sessions just written;
-- - refresh_event_family (src/db/routines/refresh_event_family.sql): the charts' event rollups,
--   the discovery catalogue and the profiles' activity.
CREATE OR REPLACE FUNCTION refresh_derived() RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  touched integer;
BEGIN
  -- Takes the one-run-at-a-time lock (hashtext('refresh_derived')), held until commit.
  touched := refresh_session_family(true);
  PERFORM refresh_session_strings(true);
  PERFORM refresh_event_family(true);
  RETURN touched;
END;
$fn$;
--> statement-breakpoint
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
--> statement-breakpoint
-- refresh_session_family(wait): the session family of refresh_derived (src/db/routines/refresh_derived.sql)
-- in one transaction, and the number of sessions it recomputed:
-- - refresh_session_rollups (src/db/routines/refresh_session_rollups.sql): sessions, session
--   pages, and the hourly and daily session, page and visitor rollups, the pairs and the sketches
--   per value (the strings over them follow in a transaction of their own,
--   src/db/routines/refresh_session_strings.sql);
-- - refresh_profile_summaries (src/db/routines/refresh_profile_summaries.sql): one row per profile,
--   its session counts from the sessions just written.
-- It reads and writes none of the event family's tables (src/db/routines/refresh_event_family.sql),
-- so the two can run at once on two connections, as the cron trigger runs them
-- (src/queries/derived.ts). With `wait` it waits for a run under way, as refresh_derived() does;
-- without, it returns NULL at once, folding nothing, while another run holds the lock.
CREATE OR REPLACE FUNCTION refresh_session_family(wait boolean) RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  -- Taken first: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  sessions_rebuilt boolean;
BEGIN
  -- The lock refresh_session_rollups takes, one run at a time: held by this transaction from here.
  IF NOT wait AND NOT pg_try_advisory_xact_lock(hashtext('refresh_derived')) THEN
    RETURN NULL;
  END IF;
  -- Read before the session family moves them: a watermark at 0 (or absent) means it rebuilds whole.
  sessions_rebuilt := coalesce((SELECT min(processed_xid) FROM derived_state WHERE name IN ('sessions', 'rollups')), 0) = 0
    OR (SELECT count(*) FROM derived_state WHERE name IN ('sessions', 'rollups')) < 2;
  touched := refresh_session_rollups();
  PERFORM refresh_profile_summaries(next_xid, sessions_rebuilt);
  -- The touched sessions (src/db/routines/refresh_session_rollups.sql): on a first build a copy of
  -- every session, freed now rather than at commit (src/db/routines/free_temporary_tables.sql).
  PERFORM free_temporary_tables('touched_sessions', 'touched_before', 'touched_after', 'touched_pages_before',
    'touched_names_before', 'touched_pages', 'touched_names', 'rollup_zones');
  RETURN touched;
END;
$fn$;
--> statement-breakpoint
-- refresh_session_rollups(): the session family of the derived tables. It derives `sessions`, one
-- row per (project_id, session_id), from the events, and then, in the same transaction, the
-- session and page rollups per hour and day with the session pages (refresh_rollups,
-- src/db/routines/refresh_rollups.sql), the visitor sketches per hour and day
-- (refresh_visitor_sketches, src/db/routines/refresh_visitor_sketches.sql) and per day and
-- dimension value (refresh_dimension_sketches, src/db/routines/refresh_dimension_sketches.sql),
-- the session aggregates per day and pair of dimension values (refresh_pair_rollups,
-- src/db/routines/refresh_pair_rollups.sql) and the page aggregates per day and dimension value
-- (refresh_page_dimension_rollups, src/db/routines/refresh_page_dimension_rollups.sql) and the
-- entry and exit pages per hour and day (refresh_entry_exit_rollups,
-- src/db/routines/refresh_entry_exit_rollups.sql), each session's property values
-- (refresh_session_properties, src/db/routines/refresh_session_properties.sql), so both query
-- paths always see the same data. It returns the number of sessions it wrote. The bit strings per
-- day over its sessions are folded from what it commits, in a transaction of their own
-- (refresh_session_strings, src/db/routines/refresh_session_strings.sql).
-- refresh_session_family (src/db/routines/refresh_session_family.sql) calls it, and the
-- one-run-at-a-time lock taken here bears the name of the entry point refresh_derived()
-- (src/db/routines/refresh_derived.sql).
--
-- It is the only writer of `sessions`. It is incremental (it recomputes only the sessions that
-- received events since its last run) and idempotent (a session is always recomputed from all of
-- its events, so running it again, or feeding the same events in one batch or in many, gives the
-- same rows).
--
-- "Since the last run" is tracked by the writing transaction's id (events.ingest_xid) rather than
-- by time or a sequence, so out-of-order commits are never missed: a run folds in every visible
-- row at or above the watermark, then moves the watermark to the oldest transaction that was
-- still open when it started. Rows it could not see yet all lie above that point; rows it saw
-- above it are folded in again next time, which is harmless because a run is idempotent.
--
-- Sessions are computed in one sorted pass: one sort of narrow rows by (session, time) feeds two
-- window aggregates and one group aggregate, and the first event's attributes are then fetched by
-- its id. (Joining four derived sets, first event, totals, entry and exit, behind a materialized
-- CTE was quadratic: the planner has no statistics for such a CTE, estimated a handful of rows and
-- chose nested loops, minutes for 50k events.) A cron run touches few sessions and takes
-- milliseconds. New sessions are inserted in the order they started (see the ORDER BY below);
-- existing rows keep their place.
--
-- The touched sessions are kept in a temporary table, and their rows and pages as they were before
-- this run in two others, so that the routines after the upsert can subtract what they were and add
-- what they are (the sketches: merge or rebuild). The first run, and any run after the 'rollups'
-- watermark was reset to 0 (by a migration that adds or reshapes a derived table), build every
-- derived table whole. A project whose timezone is new or changed gets all of its days rebuilt.
CREATE OR REPLACE FUNCTION refresh_session_rollups() RETURNS integer
LANGUAGE plpgsql
-- A bulk load sorts every new event once; give that sort room instead of spilling to disk.
SET work_mem = '256MB'
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
-- A run reaches the touched sessions' events, rows and pages by index, the newest rows of their
-- tables and cached. At the default cost of a random read (4) the planner judged a scan of all
-- 10M events and 8M session pages cheaper than 27,000 index lookups and took seconds
-- (10M events at 1,000 events/s: 40 s a run -> 31 s); every routine below runs with this too.
SET random_page_cost = 1.1
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  rollups_xid bigint;
  -- Taken before anything else: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  rebuild_all boolean;
BEGIN
  -- One run at a time: a concurrent caller waits here, then finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
  INSERT INTO derived_state (name) VALUES ('sessions'), ('rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'sessions';
  SELECT processed_xid INTO rollups_xid FROM derived_state WHERE name = 'rollups';

  rebuild_all := from_xid = 0 OR rollups_xid = 0;
  -- A whole build empties the sessions' pages, names and property values (TRUNCATE), which a strings
  -- run on another connection reads in another order: both would wait for the other. It waits here
  -- for a strings run under way, and none begins until it commits.
  IF rebuild_all THEN
    PERFORM pg_advisory_xact_lock(hashtext('refresh_session_strings'));
  END IF;

  DROP TABLE IF EXISTS pg_temp.touched_sessions, pg_temp.touched_before, pg_temp.touched_after, pg_temp.touched_pages_before,
    pg_temp.touched_names_before;
  CREATE TEMPORARY TABLE touched_sessions (project_id text, session_id text) ON COMMIT DROP;
  -- The touched sessions as they were before this run (none for new ones), their pages and names.
  CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  -- ...and as this run writes them (filled by the upsert below).
  CREATE TEMPORARY TABLE touched_after ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  CREATE TEMPORARY TABLE touched_pages_before ON COMMIT DROP AS SELECT * FROM session_pages WITH NO DATA;
  CREATE TEMPORARY TABLE touched_names_before ON COMMIT DROP AS SELECT * FROM session_names WITH NO DATA;
  IF from_xid > 0 THEN
    INSERT INTO touched_sessions SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid;
    ANALYZE touched_sessions;
    INSERT INTO touched_before SELECT s.*
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    ANALYZE touched_before;
    -- A session's pages carry its start: found through it, by the (project_id, started_at) index.
    INSERT INTO touched_pages_before SELECT p.*
    FROM touched_before b JOIN session_pages p ON p.project_id = b.project_id AND p.started_at = b.started_at AND p.session_id = b.id;
    ANALYZE touched_pages_before;
    INSERT INTO touched_names_before SELECT n.*
    FROM touched_before b JOIN session_names n ON n.project_id = b.project_id AND n.started_at = b.started_at AND n.session_id = b.id;
    ANALYZE touched_names_before;
  END IF;

  -- Every event of every session that received one since the last run. Planned afresh each
  -- time (EXECUTE): the first run reads all events without a join, later runs reach the few
  -- touched sessions through the indexes.
  EXECUTE format($sql$
  WITH ordered AS (
    -- The sort key starts with the high-cardinality session id, in byte order ("C"): comparisons
    -- are then memcmp on abbreviated keys rather than the locale's collation (3x faster here).
    -- The grouping below reuses that order.
    SELECT e.session_id COLLATE "C" AS session_id, e.project_id COLLATE "C" AS project_id, e.id, e.name, e.created_at, e.revenue, e.path, e.origin,
      row_number() OVER in_order AS position,
      count(*) FILTER (WHERE e.name = 'screen_view') OVER in_order AS views_so_far,
      count(*) FILTER (WHERE e.name = 'screen_view') OVER (PARTITION BY e.session_id COLLATE "C", e.project_id COLLATE "C") AS views
    FROM events e
    WHERE %1$s
    WINDOW in_order AS (PARTITION BY e.session_id COLLATE "C", e.project_id COLLATE "C" ORDER BY e.created_at, e.id ROWS UNBOUNDED PRECEDING)
  ),
  summary AS (
    SELECT session_id, project_id,
      min(created_at) AS started_at, max(created_at) AS ended_at, count(*)::int AS event_count,
      max(views)::int AS views, coalesce(sum(revenue), 0)::bigint AS revenue,
      -- Entry and exit pages: the first and the last screen view in time order.
      max(path) FILTER (WHERE name = 'screen_view' AND views_so_far = 1) AS entry_path,
      max(origin) FILTER (WHERE name = 'screen_view' AND views_so_far = 1) AS entry_origin,
      max(path) FILTER (WHERE name = 'screen_view' AND views_so_far = views) AS exit_path,
      max(origin) FILTER (WHERE name = 'screen_view' AND views_so_far = views) AS exit_origin,
      (array_agg(id) FILTER (WHERE position = 1))[1] AS first_event_id
    FROM ordered
    GROUP BY session_id, project_id
  )%2$s
  INSERT INTO sessions (
    project_id, id, started_at, ended_at, duration_ms, event_count, screen_view_count, is_bounce, revenue,
    entry_path, entry_origin, exit_path, exit_origin, profile_id, device_id, referrer, referrer_name, referrer_type, utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, region, city, device, brand, model, browser, browser_version, os, os_version
  )
  SELECT s.project_id, s.session_id, s.started_at, s.ended_at,
      (extract(epoch FROM s.ended_at - s.started_at) * 1000)::bigint,
      s.event_count, s.views, s.views <= 1, s.revenue, s.entry_path, s.entry_origin, s.exit_path, s.exit_origin,
      -- Visitor and attributes: those of the first event.
      first_event.profile_id, first_event.device_id, first_event.referrer, first_event.referrer_name, first_event.referrer_type, first_event.utm_source, first_event.utm_medium, first_event.utm_campaign, first_event.utm_term, first_event.utm_content, first_event.country, first_event.region, first_event.city, first_event.device, first_event.brand, first_event.model, first_event.browser, first_event.browser_version, first_event.os, first_event.os_version
  FROM summary s
  JOIN events first_event ON first_event.id = s.first_event_id
  -- New sessions are written in the order they started, as live ingest appends them, so a
  -- window's sessions share pages also after a bulk load: a filtered one-day query then reads a
  -- few hundred pages instead of one per session scattered over the whole table. A cron run
  -- sorts a handful of rows, and a bulk load does not slow down measurably (a 1M-event seed:
  -- 28.5 vs 29.3 s).
  ORDER BY s.started_at
  ON CONFLICT (project_id, id) DO UPDATE SET
    profile_id = excluded.profile_id,
    device_id = excluded.device_id,
    started_at = excluded.started_at,
    ended_at = excluded.ended_at,
    duration_ms = excluded.duration_ms,
    event_count = excluded.event_count,
    screen_view_count = excluded.screen_view_count,
    is_bounce = excluded.is_bounce,
    revenue = excluded.revenue,
    entry_path = excluded.entry_path,
    entry_origin = excluded.entry_origin,
    exit_path = excluded.exit_path,
    exit_origin = excluded.exit_origin,
    referrer = excluded.referrer,
    referrer_name = excluded.referrer_name,
    referrer_type = excluded.referrer_type,
    utm_source = excluded.utm_source,
    utm_medium = excluded.utm_medium,
    utm_campaign = excluded.utm_campaign,
    utm_term = excluded.utm_term,
    utm_content = excluded.utm_content,
    country = excluded.country,
    region = excluded.region,
    city = excluded.city,
    device = excluded.device,
    brand = excluded.brand,
    model = excluded.model,
    browser = excluded.browser,
    browser_version = excluded.browser_version,
    os = excluded.os,
    os_version = excluded.os_version
  %3$s
  $sql$, CASE WHEN from_xid = 0 THEN 'true' ELSE
    '(e.project_id, e.session_id) IN (SELECT project_id, session_id FROM touched_sessions)' END,
    -- After a first run, the rows written are also kept as `touched_after`: every routine below
    -- reads the touched sessions from it rather than looking each one up again.
    CASE WHEN from_xid > 0 THEN ', upserted AS (' ELSE '' END,
    CASE WHEN from_xid > 0 THEN 'RETURNING sessions.*) INSERT INTO touched_after SELECT * FROM upserted' ELSE '' END);
  GET DIAGNOSTICS touched = ROW_COUNT;
  ANALYZE touched_after;

  PERFORM refresh_rollups(rebuild_all);
  PERFORM refresh_session_properties(rebuild_all);
  PERFORM refresh_visitor_sketches(rebuild_all);
  PERFORM refresh_dimension_sketches(rebuild_all);
  PERFORM refresh_pair_rollups(rebuild_all);
  PERFORM refresh_page_dimension_rollups(rebuild_all);
  PERFORM refresh_entry_exit_rollups(rebuild_all, next_xid);
  -- After a full build, fresh statistics ahead of autovacuum (which had not reached the 1.5 GB of
  -- pair rows 20 minutes after a 10M-event build): the next runs' upserts and the queries are
  -- planned from what the tables hold.
  IF rebuild_all THEN
    ANALYZE session_rollups, session_day_rollups, page_rollups, page_day_rollups, visitor_sketches,
      visitor_day_sketches, visitor_dimension_sketches, session_pair_rollups, page_dimension_rollups,
      entry_exit_rollups, entry_exit_day_rollups;
    -- Every session was written again: the strings are built whole from them too.
    UPDATE derived_state SET processed_xid = 0 WHERE name = 'session_bits';
  END IF;
  INSERT INTO rollup_timezones (project_id, timezone)
  SELECT id, coalesce(timezone, 'UTC') FROM projects
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE rollup_timezones.timezone IS DISTINCT FROM excluded.timezone;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now()
  WHERE name IN ('sessions', 'rollups');
  RETURN touched;
END;
$fn$;
--> statement-breakpoint
-- refresh_session_strings(wait): the session strings of refresh_derived (src/db/routines/refresh_derived.sql)
-- in a transaction of their own, and the number of sessions they took in: the bit strings per day
-- over each day's sessions and visitors (refresh_session_bits, src/db/routines/refresh_session_bits.sql),
-- from the sessions the session family (src/db/routines/refresh_session_family.sql) has committed.
--
-- They read only what the session family writes (sessions, their pages, names and property
-- values) and write nothing it reads, so the cron trigger runs them on the event family's
-- connection once that family is done, while the next session family runs on the other
-- (src/queries/derived.ts): the session family's work is then shared by both cores of the server.
-- The strings so lag the session rollups by up to a run. An answer from the strings reads the day
-- rollups only for the bounds of its ranking, and the sessions' property values only to ask
-- whether the strings can answer; for that run they may be a run ahead.
--
-- Beside a session family, their statements must all see one state of its tables: a run reads the
-- sessions several times (visitors numbered, then the sessions of a day, then a visitor's), and a
-- family committing in between would leave a new visitor without a number. So a run beside a
-- family is a REPEATABLE READ transaction (the cron's, src/queries/derived.ts); in any other
-- isolation it takes the family's lock first and runs alone, as in refresh_derived(), which holds
-- it already. A family that rebuilds whole waits for a strings run under way
-- (src/db/routines/refresh_session_rollups.sql).
--
-- Their own watermark ('session_bits' in derived_state) is a transaction id like the others: the
-- sessions with an event at or above it are taken in, read as stored, and the watermark moves to
-- the session family's (every event below it is in `sessions`, since the family's run that set it
-- committed before this one began). A session whose events are visible but not yet folded is taken
-- in as stored (or not at all, when it has no row yet) and again next time: its events are at or
-- above the new watermark. A watermark at 0 (or absent) builds every string whole; the session
-- family sets it to 0 when it rebuilds whole itself (src/db/routines/refresh_session_rollups.sql).
-- With `wait` it waits for a run under way; without, it returns NULL at once while one holds the lock.
CREATE OR REPLACE FUNCTION refresh_session_strings(wait boolean) RETURNS integer
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
-- As in refresh_session_rollups: the touched sessions are reached by index, not by a scan.
SET random_page_cost = 1.1
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  sessions_xid bigint;
  rebuild_all boolean;
  taken integer := 0;
BEGIN
  -- The family's lock first, as refresh_derived() takes them, so that the two never wait for each other.
  IF current_setting('transaction_isolation') NOT IN ('repeatable read', 'serializable') THEN
    IF wait THEN
      PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
    ELSIF NOT pg_try_advisory_xact_lock(hashtext('refresh_derived')) THEN
      RETURN NULL;
    END IF;
  END IF;
  IF wait THEN
    PERFORM pg_advisory_xact_lock(hashtext('refresh_session_strings'));
  ELSIF NOT pg_try_advisory_xact_lock(hashtext('refresh_session_strings')) THEN
    RETURN NULL;
  END IF;
  SELECT processed_xid INTO sessions_xid FROM derived_state WHERE name = 'sessions';
  IF coalesce(sessions_xid, 0) = 0 THEN
    RETURN 0;
  END IF;
  INSERT INTO derived_state (name) VALUES ('session_bits') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'session_bits';
  rebuild_all := from_xid = 0;

  PERFORM free_temporary_tables('string_sessions');
  CREATE TEMPORARY TABLE string_sessions ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  IF NOT rebuild_all THEN
    INSERT INTO string_sessions SELECT s.*
    FROM (SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid) AS t
    JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    GET DIAGNOSTICS taken = ROW_COUNT;
    ANALYZE string_sessions;
  END IF;

  PERFORM refresh_session_bits(rebuild_all);
  IF rebuild_all THEN
    SELECT count(*) INTO taken FROM sessions;
    ANALYZE session_day_bits, session_day_slices, page_day_bits, page_day_slices, visitor_ordinals, visitor_day_bits,
      visitor_day_mixed, session_day_ordinals;
  END IF;
  PERFORM free_temporary_tables('string_sessions');

  -- Moved only from where this run began: a session family that rebuilt whole meanwhile set it to
  -- 0, and the next run must build the strings whole.
  UPDATE derived_state SET processed_xid = greatest(processed_xid, sessions_xid), last_run_at = now()
  WHERE name = 'session_bits' AND processed_xid = from_xid;
  RETURN taken;
END;
$fn$;
--> statement-breakpoint
-- session_bit_zones(rebuild_all): each project's timezone (UTC when it has none), and whether its
-- strings per project day are rebuilt whole in this run: on a full build of the strings
-- (`rebuild_all`), and when the timezone differs from the one they were built in
-- (session_bit_timezones). The strings keep their own record rather than rollup_timezones
-- (derived_zones, src/db/routines/derived_zones.sql): they are folded in a transaction of their own
-- (src/db/routines/refresh_session_strings.sql), which can begin after the session rollups have
-- recorded a project's new zone and would then never rebuild its strings.
CREATE OR REPLACE FUNCTION session_bit_zones(rebuild_all boolean)
RETURNS TABLE (project_id text, timezone text, rebuilt boolean)
LANGUAGE sql
STABLE
AS $fn$
  SELECT p.id, coalesce(p.timezone, 'UTC'), rebuild_all OR z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC')
  FROM projects p LEFT JOIN session_bit_timezones z ON z.project_id = p.id
$fn$;
