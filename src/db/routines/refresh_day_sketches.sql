-- refresh_day_sketches(): the day rows of the rollups (visitor_day_sketches, session_day_rollups,
-- page_day_rollups) of the (project_id, day) rows of the temporary table `rollup_days`, whose days
-- are local midnights in its `timezone`. refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) fills that table after the hours are rebuilt,
-- calls this, and only then records each project's timezone in rollup_timezones. A project whose
-- recorded timezone differs from its own has been re-zoned: its old session and page day rows are
-- deleted here (its old sketches by the caller), and `rollup_days` holds all of its days.
--
-- A day whose local midnights are whole UTC hours (every day of a zone with a whole-hour offset)
-- is built from its hours, which refresh_rollups (src/db/routines/refresh_rollups.sql) has just
-- written: its session and page rows are sums of the hourly rows, and its visitor sketch is the
-- union of the hours' sketches, the bit_or of their planes, so no session is hashed again. Days
-- of half-hour zones have no session or page day rows (the query layer reads day rows only for
-- whole-hour days) and their sketches are built from their sessions by insert_visitor_sketches
-- (src/db/routines/insert_visitor_sketches.sql).
CREATE OR REPLACE FUNCTION refresh_day_sketches() RETURNS void
LANGUAGE plpgsql
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
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

  -- The days whose two midnights, this one and the next, are whole UTC hours: built from their hours.
  -- The next midnight is that of the next local date, not the day's first instant plus a day: a day
  -- without a midnight (a spring change at 00:00, as in America/Santiago) starts at 01:00, and the
  -- day after it at 00:00 again, which adding a day to 01:00 would count in both days.
  CREATE TEMPORARY TABLE whole_hour_days ON COMMIT DROP AS
  SELECT project_id, day, ((day AT TIME ZONE timezone)::date + 1)::timestamp AT TIME ZONE timezone AS next_day
  FROM rollup_days;
  DELETE FROM whole_hour_days
  WHERE date_trunc('hour', day, 'UTC') <> day OR date_trunc('hour', next_day, 'UTC') <> next_day;
  ANALYZE whole_hour_days;

  INSERT INTO visitor_day_sketches (project_id, day, plane, registers)
  SELECT d.project_id, d.day, v.plane, bit_or(v.registers)
  FROM whole_hour_days d
  JOIN visitor_sketches v ON v.project_id = d.project_id AND v.hour >= d.day AND v.hour < d.next_day
  GROUP BY d.project_id, d.day, v.plane;

  -- The sketches of the other days, from their sessions.
  PERFORM insert_visitor_sketches('visitor_day_sketches', ARRAY['day'],
    $$SELECT s.project_id, d.day, visitor_entry(s.profile_id) AS entry
      FROM rollup_days d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day
      AND s.started_at < ((d.day AT TIME ZONE d.timezone)::date + 1)::timestamp AT TIME ZONE d.timezone
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
