-- refresh_profile_summaries(next_xid, sessions_rebuilt): the profile summaries
-- (src/db/schema/profile-summaries.ts) from the events whose ingest_xid lies between its watermark
-- derived_state('profiles') and next_xid, the snapshot xmin refresh_session_family
-- (src/db/routines/refresh_session_family.sql) took first, after the session rollups have run in
-- the same transaction. Events never change once stored, so a run merges what the new events carry: the
-- earliest and latest time (the latest event, ties broken by id, gives the last-known attributes),
-- whether one was identified and the latest that was, and their count. Session counts move by
-- difference: a stored profile gains the touched sessions that are now its own and loses those that
-- were (touched_after less touched_before, per visitor: a new session, or one a late earlier event
-- handed from one visitor to another; a session that only grew nets to nothing), so a returning
-- visitor's sessions are not counted again, however many it has. Sessions are never deleted, so
-- that difference is every change. A profile new to the summaries is counted whole instead,
-- through the (project_id, profile_id, started_at) index of sessions: its sessions may have been
-- written before its events reached this routine (the session family reads every committed event,
-- this one those below next_xid), when it had no row to add them to. All of them are recounted
-- when the sessions were rebuilt whole. The first run (watermark 0) reads every event.
CREATE OR REPLACE FUNCTION refresh_profile_summaries(next_xid bigint, sessions_rebuilt boolean) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
SET random_page_cost = 1.1
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['profile_delta', 'new_profiles', 'session_count_moves'];
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
    CREATE TEMPORARY TABLE session_count_moves ON COMMIT DROP AS
    SELECT project_id, profile_id, sum(moved)::int AS moved
    FROM (
      SELECT project_id, profile_id, 1 AS moved FROM touched_after
      UNION ALL SELECT project_id, profile_id, -1 FROM touched_before
    ) AS m
    GROUP BY project_id, profile_id
    HAVING sum(moved) <> 0;
    UPDATE profile_summaries p SET session_count = p.session_count + m.moved
    FROM session_count_moves m
    WHERE p.project_id = m.project_id AND p.profile_id = m.profile_id
      AND NOT EXISTS (SELECT FROM new_profiles n WHERE n.project_id = m.project_id AND n.profile_id = m.profile_id);
    UPDATE profile_summaries p SET session_count = c.sessions
    FROM (
      SELECT n.project_id, n.profile_id,
        (SELECT count(*)::int FROM sessions s WHERE s.project_id = n.project_id AND s.profile_id = n.profile_id) AS sessions
      FROM new_profiles n
    ) AS c
    WHERE p.project_id = c.project_id AND p.profile_id = c.profile_id AND p.session_count <> c.sessions;
  END IF;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now() WHERE name = 'profiles';
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
