-- refresh_profile_activity(next_xid): the per-profile local days and their aggregates
-- (profile_days, active_user_days, retention_weeks; src/db/schema/profile-activity.ts) from the
-- events whose ingest_xid lies between its watermark derived_state('activity') and next_xid, the
-- snapshot xmin refresh_derived (src/db/routines/refresh_derived.sql) took first.
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
--> statement-breakpoint
-- refresh_profile_summaries(next_xid, sessions_rebuilt): the profile summaries
-- (src/db/schema/profile-summaries.ts) from the events whose ingest_xid lies between its watermark
-- derived_state('profiles') and next_xid, the snapshot xmin refresh_derived
-- (src/db/routines/refresh_derived.sql) took first, after the session family has run in the same
-- transaction. Events never change once stored, so a run merges what the new events carry: the
-- earliest and latest time (the latest event, ties broken by id, gives the last-known attributes),
-- whether one was identified and the latest that was, and their count. Session counts are recounted, through the
-- (project_id, profile_id, started_at) index of sessions, for the profiles whose sessions this run
-- changed: the visitor of a new session, and both visitors of one a late earlier event handed from
-- one to another; and for the profiles new to the summaries, whose sessions may have been written
-- before their events reached this routine (the session family reads every committed event, this
-- one those below next_xid). A session that only grew changes no count, so its visitor is not
-- counted again each minute it runs, whatever its history of sessions. All of them are recounted
-- when the sessions were rebuilt whole. The first run (watermark 0) reads every event.
CREATE OR REPLACE FUNCTION refresh_profile_summaries(next_xid bigint, sessions_rebuilt boolean) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
SET random_page_cost = 1.1
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['profile_delta', 'new_profiles', 'recounted_profiles'];
  from_xid bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('refresh_profile_summaries'));
  INSERT INTO derived_state (name) VALUES ('profiles') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'profiles';
  IF from_xid = 0 THEN
    TRUNCATE profile_summaries;
  END IF;

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Per profile of the new events (found through the ingest_xid BRIN index; none when no
  -- transaction has ended since the last run, while the sessions may still have changed): its
  -- latest event with that event's attributes, its first time, its count and whether one was
  -- identified.
  CREATE TEMPORARY TABLE profile_delta ON COMMIT DROP AS
  SELECT DISTINCT ON (e.project_id, e.profile_id) e.project_id, e.profile_id,
    min(e.created_at) OVER by_profile AS first_seen_at, e.created_at AS last_seen_at, e.id AS last_event_id,
    bool_or(e.profile_id <> e.device_id) OVER by_profile AS identified,
    max(e.created_at) FILTER (WHERE e.profile_id <> e.device_id) OVER by_profile AS last_identified_at,
    e.country, e.city, e.device, e.browser,
    count(*) OVER by_profile AS event_count
  FROM events e
  WHERE e.ingest_xid >= from_xid AND e.ingest_xid < next_xid
  WINDOW by_profile AS (PARTITION BY e.project_id, e.profile_id)
  ORDER BY e.project_id, e.profile_id, e.created_at DESC, e.id DESC;

  -- The profiles new to the summaries, told apart by the upsert itself: a new row holds only this
  -- run's events, a stored one (at least one event) more. Asked of the table beforehand, the same
  -- took 0.7 s a run at 1,000 events/s. Not needed on a first run, which recounts every profile.
  CREATE TEMPORARY TABLE new_profiles (project_id text, profile_id text) ON COMMIT DROP;
  WITH upserted AS (
    INSERT INTO profile_summaries AS p (project_id, profile_id, first_seen_at, last_seen_at, last_event_id, identified,
      last_identified_at, country, city, device, browser, event_count, session_count)
    SELECT project_id, profile_id, first_seen_at, last_seen_at, last_event_id, identified,
      last_identified_at, country, city, device, browser, event_count, 0
    FROM profile_delta
    ON CONFLICT (project_id, profile_id) DO UPDATE SET
      first_seen_at = least(p.first_seen_at, excluded.first_seen_at),
      identified = p.identified OR excluded.identified,
      last_identified_at = greatest(p.last_identified_at, excluded.last_identified_at),
      event_count = p.event_count + excluded.event_count,
      -- The attributes follow the latest event, whichever run brought it.
      country = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.country ELSE p.country END,
      city = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.city ELSE p.city END,
      device = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.device ELSE p.device END,
      browser = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.browser ELSE p.browser END,
      last_event_id = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.last_event_id ELSE p.last_event_id END,
      last_seen_at = greatest(p.last_seen_at, excluded.last_seen_at)
    RETURNING p.project_id, p.profile_id, p.event_count
  )
  INSERT INTO new_profiles
  SELECT u.project_id, u.profile_id FROM upserted u
  JOIN profile_delta d ON d.project_id = u.project_id AND d.profile_id = u.profile_id
  WHERE from_xid > 0 AND u.event_count = d.event_count;

  IF from_xid = 0 OR sessions_rebuilt THEN
    UPDATE profile_summaries p SET session_count = c.sessions
    FROM (SELECT project_id, profile_id, count(*)::int AS sessions FROM sessions GROUP BY project_id, profile_id) AS c
    WHERE p.project_id = c.project_id AND p.profile_id = c.profile_id AND p.session_count <> c.sessions;
  ELSE
    -- touched_before and touched_after: the rewritten sessions before and after this run
    -- (refresh_session_rollups, src/db/routines/refresh_session_rollups.sql).
    CREATE TEMPORARY TABLE recounted_profiles ON COMMIT DROP AS
    SELECT project_id, profile_id FROM new_profiles
    UNION SELECT a.project_id, a.profile_id FROM touched_after a
      LEFT JOIN touched_before b ON b.project_id = a.project_id AND b.id = a.id
      WHERE b.id IS NULL OR b.profile_id IS DISTINCT FROM a.profile_id
    UNION SELECT b.project_id, b.profile_id FROM touched_before b
      JOIN touched_after a ON a.project_id = b.project_id AND a.id = b.id
      WHERE a.profile_id IS DISTINCT FROM b.profile_id;
    UPDATE profile_summaries p SET session_count = c.sessions
    FROM (
      SELECT r.project_id, r.profile_id,
        (SELECT count(*)::int FROM sessions s WHERE s.project_id = r.project_id AND s.profile_id = r.profile_id) AS sessions
      FROM recounted_profiles r
    ) AS c
    WHERE p.project_id = c.project_id AND p.profile_id = c.profile_id AND p.session_count <> c.sessions;
  END IF;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now() WHERE name = 'profiles';
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
