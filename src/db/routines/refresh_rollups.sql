-- refresh_rollups(units): the hourly rollups (session_rollups, page_rollups, visitor_sketches) and
-- the session pages (session_pages) of some hours: of every hour when `units` is NULL (a full
-- build), else of the (project_id, hour) rows of the temporary table named by `units`. Every row
-- of those hours is deleted and recomputed from their sessions, so a run is idempotent.
-- refresh_session_rollups (src/db/routines/refresh_session_rollups.sql) calls it in the same
-- transaction as it writes the sessions, with the hours its touched sessions started in, before
-- and after.
--
-- How it is built, and why:
-- - the sessions of the hours are copied once into a narrow temporary table with their UTC hour
--   and byte-order ("C") keys, and analyzed, so every later step reads them cheaply and is planned
--   from real row counts: the join to their events is a hash join over all events on a full build,
--   the (project_id, session_id) index otherwise;
-- - session_rollups: all sessions ('' dimension), then one hash aggregate per breakdown dimension
--   (session_dimensions(), src/db/routines/session_dimensions.sql).
--   Grouping sets sort the sessions once per set: 305k sessions took 12 s that way, under 7 s this
--   way;
-- - session_pages: every (origin, path) of any event of each session, with that page's screen
--   views, written in time order; the page rollups are summed from those rows as they are written
--   (a session counts once per page), so the events are joined once;
-- - visitor_sketches by insert_visitor_sketches (src/db/routines/insert_visitor_sketches.sql).
CREATE OR REPLACE FUNCTION refresh_rollups(units text) RETURNS void
LANGUAGE plpgsql
-- The planner cannot estimate how few (hour, value) groups there are and would sort instead.
SET enable_sort = off
-- JIT compiles the wide aggregate expressions for hundreds of milliseconds; these scans and
-- aggregates gain nothing from it.
SET jit = off
-- DROP TABLE IF EXISTS of the temporary table would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  aggregates text := 'count(*), count(*) FILTER (WHERE is_bounce), sum(screen_view_count),'
    ' coalesce(sum(duration_ms) FILTER (WHERE duration_ms > 0), 0), count(*) FILTER (WHERE duration_ms > 0), sum(revenue)';
  source text := CASE WHEN units IS NULL THEN 'sessions s' ELSE format(
    '%I d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.hour AND s.started_at < d.hour + interval ''1 hour''',
    units) END;
  rebuilt bigint;
  page_indexes text[];
  page_index_names text[];
  page_index text;
BEGIN
  IF units IS NULL THEN
    TRUNCATE session_rollups, page_rollups, session_pages, visitor_sketches;
    -- A full build writes every session page: building their indexes afterwards, from their
    -- definitions as they stand, is several times cheaper than maintaining them row by row.
    SELECT array_agg(pg_get_indexdef(indexrelid)), array_agg(indexrelid::regclass::text)
    INTO page_indexes, page_index_names
    FROM pg_index WHERE indrelid = 'session_pages'::regclass;
    IF page_index_names IS NOT NULL THEN
      EXECUTE (SELECT 'DROP INDEX ' || string_agg(name, ', ') FROM unnest(page_index_names) AS name);
    END IF;
  ELSE
    EXECUTE format('DELETE FROM session_rollups r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM page_rollups r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM visitor_sketches r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM session_pages r USING %I d WHERE r.project_id = d.project_id'
      ' AND r.started_at >= d.hour AND r.started_at < d.hour + interval ''1 hour''', units);
  END IF;

  -- Empty strings are "not set", like NULL (the breakdown endpoints' rule).
  DROP TABLE IF EXISTS pg_temp.rollup_sessions;
  EXECUTE format('CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS'
      ' SELECT s.project_id COLLATE "C" AS project_id, s.id, s.profile_id, s.started_at,'
      ' date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') AS hour,'
      ' s.is_bounce, s.screen_view_count, s.duration_ms, s.revenue', '')
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d.dimension), '') FROM session_dimensions() d)
    || format(' FROM %s', source);
  ANALYZE rollup_sessions;

  -- All sessions ('' dimension), then every breakdown dimension.
  EXECUTE format('INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, sessions, bounces,'
      ' screen_views, duration_ms, timed_sessions, revenue)'
      ' SELECT project_id, hour, '''', NULL, NULL, %s FROM rollup_sessions GROUP BY 1, 2', aggregates)
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, hour, %L, %I, %s, %s FROM rollup_sessions GROUP BY 1, 2, 4, 5',
      d.dimension, d.dimension, coalesce(quote_ident(d.prefix), 'NULL::text'), aggregates), '')
      FROM session_dimensions() AS d);

  -- Session pages: every (origin, path) of any event of each session, with that page's screen
  -- views. The page rollups are their sums over the pages with a screen view (a session counts
  -- once per page), taken from the rows as they are written.
  WITH pages AS (
    INSERT INTO session_pages (project_id, session_id, started_at, is_bounce, origin, path, title, views, duration_ms, timed_views)
    SELECT * FROM (
      SELECT rs.project_id, rs.id, rs.started_at, rs.is_bounce, e.origin, e.path,
        max(e.title) FILTER (WHERE e.name = 'screen_view'),
        count(*) FILTER (WHERE e.name = 'screen_view'),
        coalesce(sum(e.duration) FILTER (WHERE e.name = 'screen_view' AND e.duration > 0), 0),
        count(*) FILTER (WHERE e.name = 'screen_view' AND e.duration > 0)
      FROM rollup_sessions rs
      JOIN events e ON e.project_id = rs.project_id AND e.session_id = rs.id
      GROUP BY rs.project_id, rs.id, rs.started_at, rs.is_bounce, e.origin, e.path
    ) AS session_page
    -- Written in time order, a window's rows sit together: a one-day page list then reads a
    -- ninetieth of a 90-day table's pages, not rows scattered over all of them (10M events:
    -- 0.65 s -> 0.15 s). Later runs append recent hours, which keeps the order. The subquery
    -- keeps the grouping hashed: only its result is sorted, on the start alone.
    ORDER BY started_at
    RETURNING project_id, started_at, is_bounce, origin, path, title, views, duration_ms, timed_views
  )
  INSERT INTO page_rollups (project_id, hour, origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views)
  SELECT project_id, date_bin('1 hour', started_at, timestamptz '2000-01-01 00:00:00+00'), origin, path,
    max(title), count(*), sum(views), count(*) FILTER (WHERE is_bounce), sum(duration_ms), sum(timed_views)
  FROM pages
  WHERE views > 0
  GROUP BY 1, 2, 3, 4;

  FOREACH page_index IN ARRAY coalesce(page_indexes, '{}') LOOP
    EXECUTE page_index;
  END LOOP;

  -- Fresh statistics when this run rewrote a large share of the sessions and their pages (the
  -- first build, a bulk load), ahead of autovacuum: a table planned as nearly empty would be
  -- scanned once per session of the other.
  SELECT count(*) INTO rebuilt FROM rollup_sessions;
  IF rebuilt > 1000 AND rebuilt > 0.1 * (SELECT reltuples FROM pg_class WHERE oid = 'sessions'::regclass) THEN
    ANALYZE sessions;
  END IF;
  IF rebuilt > 1000 AND rebuilt > 0.1 * (SELECT reltuples FROM pg_class WHERE oid = 'session_pages'::regclass) THEN
    ANALYZE session_pages;
  END IF;

  PERFORM insert_visitor_sketches('visitor_sketches', ARRAY['hour'],
    'SELECT s.project_id, s.hour, visitor_entry(s.profile_id) AS entry FROM rollup_sessions s');
  DROP TABLE rollup_sessions;
END;
$fn$;
