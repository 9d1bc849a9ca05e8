-- refresh_profile_activity(next_xid): the per-profile local days and their aggregates
-- (profile_days, active_user_days, retention_weeks; src/db/schema/profile-activity.ts) from the
-- events whose ingest_xid lies between its watermark derived_state('activity') and next_xid, the
-- snapshot xmin refresh_event_family (src/db/routines/refresh_event_family.sql) took first.
--
-- The new events are counted per (project, profile, local day of the project's timezone) and
-- added to profile_days. The aggregates depend on each profile's whole sequence of days (the gap
-- to its previous active day, its cohort, its next active week), so for every profile the run
-- touched its contribution is computed from profile_days before the merge and subtracted, and
-- computed again after it and added: exact under late events, whatever order they arrive in.
-- The first run (watermark 0) reads every event; a project whose timezone is no longer the one
-- recorded in activity_timezones has its rows rebuilt from all its events.
CREATE OR REPLACE FUNCTION refresh_profile_activity(next_xid bigint) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['activity_zones', 'activity_delta', 'activity_profiles', 'user_day_changes',
    'retention_week_changes'];
  from_xid bigint;
  sign integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('refresh_profile_activity'));
  INSERT INTO derived_state (name) VALUES ('activity') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'activity';
  IF from_xid >= next_xid THEN
    RETURN;
  END IF;

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Each project's zone, and whether its rows are rebuilt whole (every project on the first run).
  CREATE TEMPORARY TABLE activity_zones ON COMMIT DROP AS
  SELECT p.id AS project_id, coalesce(p.timezone, 'UTC') AS timezone,
    from_xid = 0 OR (z.timezone IS NOT NULL AND z.timezone <> coalesce(p.timezone, 'UTC')) AS rebuilt
  FROM projects p LEFT JOIN activity_timezones z ON z.project_id = p.id;
  IF from_xid = 0 THEN
    TRUNCATE profile_days, active_user_days, retention_weeks;
  ELSE
    EXECUTE 'DELETE FROM profile_days d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
    EXECUTE 'DELETE FROM active_user_days d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
    EXECUTE 'DELETE FROM retention_weeks d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
  END IF;

  -- The new events per profile and local day: through the ingest_xid BRIN index, or every event of
  -- a rebuilt project.
  CREATE TEMPORARY TABLE activity_delta (project_id text, profile_id text, day date, events integer,
    identified_events integer) ON COMMIT DROP;
  IF from_xid > 0 THEN
    INSERT INTO activity_delta
    SELECT e.project_id, e.profile_id, (e.created_at AT TIME ZONE z.timezone)::date,
      count(*)::integer, (count(*) FILTER (WHERE e.profile_id <> e.device_id))::integer
    FROM events e JOIN activity_zones z ON z.project_id = e.project_id AND NOT z.rebuilt
    WHERE e.ingest_xid >= from_xid AND e.ingest_xid < next_xid
    GROUP BY 1, 2, 3;
  END IF;
  IF EXISTS (SELECT 1 FROM activity_zones WHERE rebuilt) THEN
    EXECUTE format('INSERT INTO activity_delta SELECT e.project_id, e.profile_id, (e.created_at AT TIME ZONE z.timezone)::date,'
      ' count(*)::integer, (count(*) FILTER (WHERE e.profile_id <> e.device_id))::integer'
      ' FROM activity_zones z JOIN events e ON e.project_id = z.project_id'
      ' WHERE z.rebuilt AND e.ingest_xid < %s AND %s GROUP BY 1, 2, 3', next_xid, rebuilt_projects_only('activity_zones', 'e'));
  END IF;
  -- The profiles whose aggregates can change: those with a day new to profile_days, or a day
  -- whose first identified event this is. The aggregates read only which days a profile has and
  -- which of them are identified, so the others' contributions stay as they are: a profile whose
  -- run only added events to days it had is not read again, whatever its history of days.
  CREATE TEMPORARY TABLE activity_profiles ON COMMIT DROP AS
  SELECT DISTINCT a.project_id, a.profile_id FROM activity_delta a
  WHERE NOT EXISTS (SELECT 1 FROM profile_days d WHERE d.project_id = a.project_id AND d.profile_id = a.profile_id
    AND d.day = a.day AND (d.identified_events > 0 OR a.identified_events = 0));
  ANALYZE activity_delta, activity_profiles;

  CREATE TEMPORARY TABLE user_day_changes (project_id text, day date, identified boolean, gap smallint,
    last boolean, users integer) ON COMMIT DROP;
  CREATE TEMPORARY TABLE retention_week_changes (project_id text, cohort date, week date, next_week date,
    users integer) ON COMMIT DROP;
  FOREACH sign IN ARRAY ARRAY[-1, 1] LOOP
    IF sign = 1 THEN
      INSERT INTO profile_days AS d (project_id, profile_id, day, events, identified_events)
      SELECT project_id, profile_id, day, events, identified_events FROM activity_delta
      ON CONFLICT (project_id, profile_id, day) DO UPDATE SET
        events = d.events + excluded.events,
        identified_events = d.identified_events + excluded.identified_events;
    END IF;
    -- Each touched profile's days, once over all its days and once over its identified ones: the
    -- gap to the previous day (91 and more: not within the 90 days `days` can span) and whether
    -- there is a later one.
    INSERT INTO user_day_changes
    SELECT project_id, day, identified, least(gap, 91), last, sum(sign)
    FROM (
      SELECT d.project_id, d.day, false AS identified,
        coalesce(d.day - lag(d.day) OVER by_profile, 91) AS gap, lead(d.day) OVER by_profile IS NULL AS last
      FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
      WINDOW by_profile AS (PARTITION BY d.project_id, d.profile_id ORDER BY d.day)
      UNION ALL
      SELECT d.project_id, d.day, true,
        coalesce(d.day - lag(d.day) OVER by_profile, 91), lead(d.day) OVER by_profile IS NULL
      FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
      WHERE d.identified_events > 0
      WINDOW by_profile AS (PARTITION BY d.project_id, d.profile_id ORDER BY d.day)
    ) AS days
    GROUP BY 1, 2, 3, 4, 5;
    -- Each touched profile's Monday weeks with an identified event: its cohort (the first) and the
    -- next one.
    INSERT INTO retention_week_changes
    SELECT project_id, cohort, week, next_week, sum(sign)
    FROM (
      SELECT project_id, week, min(week) OVER by_profile AS cohort, lead(week) OVER by_profile AS next_week
      FROM (
        SELECT DISTINCT d.project_id, d.profile_id, d.day - (extract(isodow FROM d.day)::integer - 1) AS week
        FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
        WHERE d.identified_events > 0
      ) AS active_weeks
      WINDOW by_profile AS (PARTITION BY project_id, profile_id ORDER BY week)
    ) AS weeks
    GROUP BY 1, 2, 3, 4;
  END LOOP;

  INSERT INTO active_user_days AS a (project_id, day, identified, gap, last, users)
  SELECT project_id, day, identified, gap, last, sum(users) FROM user_day_changes
  GROUP BY 1, 2, 3, 4, 5 HAVING sum(users) <> 0
  ON CONFLICT (project_id, identified, day, gap, last) DO UPDATE SET users = a.users + excluded.users;
  DELETE FROM active_user_days a USING user_day_changes c
  WHERE a.users = 0 AND a.project_id = c.project_id AND a.identified = c.identified AND a.day = c.day
    AND a.gap = c.gap AND a.last = c.last;
  INSERT INTO retention_weeks AS r (project_id, cohort, week, next_week, users)
  SELECT project_id, cohort, week, next_week, sum(users) FROM retention_week_changes
  GROUP BY 1, 2, 3, 4 HAVING sum(users) <> 0
  ON CONFLICT (project_id, cohort, week, next_week) DO UPDATE SET users = r.users + excluded.users;
  DELETE FROM retention_weeks r USING retention_week_changes c
  WHERE r.users = 0 AND r.project_id = c.project_id AND r.cohort = c.cohort AND r.week = c.week
    AND r.next_week IS NOT DISTINCT FROM c.next_week;

  IF from_xid = 0 THEN
    ANALYZE profile_days, active_user_days, retention_weeks;
  END IF;
  INSERT INTO activity_timezones (project_id, timezone)
  SELECT project_id, timezone FROM activity_zones
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE activity_timezones.timezone IS DISTINCT FROM excluded.timezone;
  UPDATE derived_state SET processed_xid = next_xid, last_run_at = now() WHERE name = 'activity';
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
