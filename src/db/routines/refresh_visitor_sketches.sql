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
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['sketch_zones', 'sketch_hours', 'sketch_days', 'new_sessions'];
  hour_of constant text := 'date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'')';
BEGIN
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  CREATE TEMPORARY TABLE sketch_zones ON COMMIT DROP AS SELECT * FROM derived_zones(rebuild_all);
  -- The hours and days rebuilt from their sessions.
  CREATE TEMPORARY TABLE sketch_hours (project_id text, hour timestamptz) ON COMMIT DROP;
  CREATE TEMPORARY TABLE sketch_days (project_id text, day timestamptz, timezone text) ON COMMIT DROP;
  EXECUTE 'INSERT INTO sketch_days SELECT DISTINCT s.project_id, date_trunc(''day'', s.started_at, z.timezone), z.timezone'
    ' FROM sketch_zones z JOIN sessions s ON s.project_id = z.project_id WHERE z.rebuilt AND '
    || rebuilt_projects_only('sketch_zones', 's');

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
  EXECUTE 'DELETE FROM visitor_day_sketches v USING sketch_zones z WHERE v.project_id = z.project_id AND z.rebuilt AND '
    || rebuilt_projects_only('sketch_zones', 'v');
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
  PERFORM free_temporary_tables('whole_hour_days');

  IF NOT rebuild_all THEN
    -- The new sessions of the other days, merged into their sketches.
    PERFORM insert_visitor_sketches('visitor_day_sketches', ARRAY['day'],
      $$SELECT s.project_id, date_trunc('day', s.started_at, z.timezone) AS day, visitor_entry(s.profile_id) AS entry
        FROM new_sessions s JOIN sketch_zones z ON z.project_id = s.project_id AND NOT z.rebuilt
        WHERE NOT EXISTS (SELECT 1 FROM sketch_days d WHERE d.project_id = s.project_id
          AND d.day = date_trunc('day', s.started_at, z.timezone))$$);
  END IF;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
