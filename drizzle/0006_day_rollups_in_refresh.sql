-- Day rollups of sessions and pages, per day of the project's timezone, kept with the day
-- sketches (same days, same timezone marker). They are sums of the hourly rows of the day, so
-- they exist only for days whose local midnights are whole UTC hours (every day of a zone with a
-- whole-hour offset); the query layer uses day rows only for such days.
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

  PERFORM refresh_visitor_sketches('visitor_day_sketches', 'day',
    $$date_trunc('day', s.started_at, d.timezone)$$,
    $$rollup_days d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day
      AND s.started_at < (d.day AT TIME ZONE d.timezone + interval '1 day') AT TIME ZONE d.timezone$$);

  CREATE TEMPORARY TABLE whole_hour_days ON COMMIT DROP AS
  SELECT project_id, day, (day AT TIME ZONE timezone + interval '1 day') AT TIME ZONE timezone AS next_day
  FROM rollup_days;
  DELETE FROM whole_hour_days
  WHERE date_trunc('hour', day, 'UTC') <> day OR date_trunc('hour', next_day, 'UTC') <> next_day;
  ANALYZE whole_hour_days;

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
--> statement-breakpoint
-- Existing databases: every project counts as re-zoned at the next refresh, which builds its days.
TRUNCATE rollup_timezones;
