-- The session rollups built faster, with the same rows.
--
-- Hours (0004's refresh_rollups):
-- - the sessions of the hours are copied once into a narrow temporary table with their UTC hour
--   and byte-order ("C") keys, and analyzed, so every later step reads them cheaply and is
--   planned from real row counts;
-- - one hash aggregate per breakdown dimension instead of grouping sets, which sorted the
--   sessions once per set (305k sessions: 12 s, now under 7 s);
-- - page rollups join the sessions to their screen views with whatever join the counts call
--   for: a hash join over all events on a full build, the (project, session) index otherwise.
CREATE OR REPLACE FUNCTION refresh_rollups(units text) RETURNS void
LANGUAGE plpgsql
-- The planner cannot estimate how few (hour, value) groups there are and would sort instead.
SET enable_sort = off
SET jit = off
SET client_min_messages = warning
AS $fn$
DECLARE
  -- Breakdown dimensions, and the column that prefixes each value where there is one.
  dimensions text[] := ARRAY['referrer', 'referrer_name', 'referrer_type', 'country', 'region', 'city',
    'device', 'brand', 'model', 'browser', 'browser_version', 'os', 'os_version',
    'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];
  prefixes text[] := ARRAY[NULL, NULL, NULL, NULL, 'country', 'country',
    NULL, NULL, NULL, NULL, 'browser', NULL, 'os',
    NULL, NULL, NULL, NULL, NULL];
  aggregates text := 'count(*), count(*) FILTER (WHERE is_bounce), sum(screen_view_count),'
    ' coalesce(sum(duration_ms) FILTER (WHERE duration_ms > 0), 0), count(*) FILTER (WHERE duration_ms > 0), sum(revenue)';
  source text := CASE WHEN units IS NULL THEN 'sessions s' ELSE format(
    '%I d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.hour AND s.started_at < d.hour + interval ''1 hour''',
    units) END;
BEGIN
  IF units IS NULL THEN
    TRUNCATE session_rollups, page_rollups, visitor_sketches;
  ELSE
    EXECUTE format('DELETE FROM session_rollups r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM page_rollups r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
    EXECUTE format('DELETE FROM visitor_sketches r USING %I d WHERE r.project_id = d.project_id AND r.hour = d.hour', units);
  END IF;

  -- Empty strings are "not set", like NULL (the breakdown endpoints' rule).
  DROP TABLE IF EXISTS pg_temp.rollup_sessions;
  EXECUTE format('CREATE TEMPORARY TABLE rollup_sessions ON COMMIT DROP AS'
      ' SELECT s.project_id COLLATE "C" AS project_id, s.id, s.profile_id,'
      ' date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') AS hour,'
      ' s.is_bounce, s.screen_view_count, s.duration_ms, s.revenue', '')
    || (SELECT string_agg(format(', nullif(s.%1$I, '''') COLLATE "C" AS %1$I', d), '') FROM unnest(dimensions) d)
    || format(' FROM %s', source);
  ANALYZE rollup_sessions;

  -- All sessions ('' dimension), then every breakdown dimension.
  EXECUTE format('INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, sessions, bounces,'
      ' screen_views, duration_ms, timed_sessions, revenue)'
      ' SELECT project_id, hour, '''', NULL, NULL, %s FROM rollup_sessions GROUP BY 1, 2', aggregates)
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, hour, %L, %I, %s, %s FROM rollup_sessions GROUP BY 1, 2, 4, 5',
      d.dimension, d.dimension, coalesce(quote_ident(d.prefix), 'NULL::text'), aggregates), '')
      FROM unnest(dimensions, prefixes) AS d(dimension, prefix));

  -- Pages: per session and page first (a session counts once per page), then per page.
  INSERT INTO page_rollups (project_id, hour, origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views)
  SELECT project_id, hour, origin, path, max(title), count(*), sum(views), count(*) FILTER (WHERE is_bounce), sum(duration_ms), sum(timed_views)
  FROM (
    SELECT rs.project_id, rs.hour, e.origin, e.path, e.session_id, rs.is_bounce,
      max(e.title) AS title, count(*) AS views,
      coalesce(sum(e.duration) FILTER (WHERE e.duration > 0), 0) AS duration_ms, count(*) FILTER (WHERE e.duration > 0) AS timed_views
    FROM rollup_sessions rs
    JOIN events e ON e.project_id = rs.project_id AND e.session_id = rs.id AND e.name = 'screen_view'
    GROUP BY 1, 2, 3, 4, 5, 6
  ) page_sessions
  GROUP BY 1, 2, 3, 4;

  PERFORM refresh_visitor_sketches('visitor_sketches', 'hour', 's.hour', 'rollup_sessions s');
  DROP TABLE rollup_sessions;
END;
$fn$;
--> statement-breakpoint
-- Days (0006's refresh_day_sketches): the visitor sketch of a day whose midnights are whole UTC
-- hours is the union of its hours' sketches, and a union of HyperLogLog sketches is the bit_or of
-- their planes: no session is hashed again. Days of half-hour zones are still built from their
-- sessions. The session and page day rollups are sums of hours, as before.
CREATE OR REPLACE FUNCTION refresh_day_sketches() RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  -- Projects whose timezone changed (the marker is updated after this): their old days go.
  DELETE FROM session_day_rollups r USING projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  WHERE r.project_id = p.id AND z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC');
  DELETE FROM page_day_rollups r USING projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  WHERE r.project_id = p.id AND z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC');

  DELETE FROM visitor_day_sketches r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;
  DELETE FROM session_day_rollups r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;
  DELETE FROM page_day_rollups r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;

  CREATE TEMPORARY TABLE whole_hour_days ON COMMIT DROP AS
  SELECT project_id, day, (day AT TIME ZONE timezone + interval '1 day') AT TIME ZONE timezone AS next_day
  FROM rollup_days;
  DELETE FROM whole_hour_days
  WHERE date_trunc('hour', day, 'UTC') <> day OR date_trunc('hour', next_day, 'UTC') <> next_day;
  ANALYZE whole_hour_days;

  INSERT INTO visitor_day_sketches (project_id, day, plane, registers)
  SELECT d.project_id, d.day, v.plane, bit_or(v.registers)
  FROM whole_hour_days d
  JOIN visitor_sketches v ON v.project_id = d.project_id AND v.hour >= d.day AND v.hour < d.next_day
  GROUP BY d.project_id, d.day, v.plane;

  PERFORM refresh_visitor_sketches('visitor_day_sketches', 'day',
    $$date_trunc('day', s.started_at, d.timezone)$$,
    $$rollup_days d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day
      AND s.started_at < (d.day AT TIME ZONE d.timezone + interval '1 day') AT TIME ZONE d.timezone
      WHERE NOT EXISTS (SELECT 1 FROM whole_hour_days w WHERE w.project_id = d.project_id AND w.day = d.day)$$);

  INSERT INTO session_day_rollups (project_id, day, dimension, name, prefix, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue)
  SELECT d.project_id, d.day, r.dimension, r.name, r.prefix, sum(r.sessions), sum(r.bounces), sum(r.screen_views),
    sum(r.duration_ms), sum(r.timed_sessions), sum(r.revenue)
  FROM whole_hour_days d
  JOIN session_rollups r ON r.project_id = d.project_id AND r.hour >= d.day AND r.hour < d.next_day
  GROUP BY d.project_id, d.day, r.dimension, r.name, r.prefix;

  INSERT INTO page_day_rollups (project_id, day, origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views)
  SELECT d.project_id, d.day, r.origin, r.path, max(r.title), sum(r.sessions), sum(r.pageviews), sum(r.bounces),
    sum(r.duration_ms), sum(r.timed_views)
  FROM whole_hour_days d
  JOIN page_rollups r ON r.project_id = d.project_id AND r.hour >= d.day AND r.hour < d.next_day
  GROUP BY d.project_id, d.day, r.origin, r.path;

  DROP TABLE whole_hour_days;
END;
$fn$;
