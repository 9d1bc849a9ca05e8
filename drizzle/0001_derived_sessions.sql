-- Derived sessions: one row per (project_id, session_id), recomputed from events.
--
-- refresh_derived() is the only writer of `sessions`. It is incremental (it recomputes only the
-- sessions that received events since its last run) and idempotent (a session is always
-- recomputed from all of its events, so running it again, or feeding the same events in one batch
-- or in many, gives the same rows). The seed and the Worker's cron trigger call it.
--
-- "Since the last run" is tracked by the writing transaction's id (events.ingest_xid) rather than
-- by time or a sequence, so out-of-order commits are never missed: a run folds in every visible
-- row at or above the watermark, then moves the watermark to the oldest transaction that was
-- still open when it started. Rows it could not see yet all lie above that point; rows it saw
-- above it are folded in again next time, which is harmless because a run is idempotent.
CREATE OR REPLACE FUNCTION refresh_derived() RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  from_xid bigint;
  -- Taken before anything else: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
BEGIN
  -- One run at a time: a concurrent caller waits here, then finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
  INSERT INTO derived_state (name) VALUES ('sessions') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'sessions';

  WITH touched AS (
    SELECT DISTINCT project_id, session_id FROM events
    WHERE ingest_xid >= from_xid
  ),
  ev AS MATERIALIZED (
    SELECT e.* FROM events e JOIN touched t USING (project_id, session_id)
  ),
  firsts AS (
    SELECT DISTINCT ON (project_id, session_id) project_id, session_id, profile_id, device_id, referrer, referrer_name, referrer_type, utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, region, city, device, brand, model, browser, browser_version, os, os_version
    FROM ev ORDER BY project_id, session_id, created_at, id
  ),
  totals AS (
    SELECT project_id, session_id,
      min(created_at) AS started_at, max(created_at) AS ended_at, count(*)::int AS event_count,
      (count(*) FILTER (WHERE name = 'screen_view'))::int AS screen_view_count,
      coalesce(sum(revenue), 0)::bigint AS revenue
    FROM ev GROUP BY project_id, session_id
  ),
  entries AS (
    SELECT DISTINCT ON (project_id, session_id) project_id, session_id, path, origin
    FROM ev WHERE name = 'screen_view' ORDER BY project_id, session_id, created_at, id
  ),
  exits AS (
    SELECT DISTINCT ON (project_id, session_id) project_id, session_id, path, origin
    FROM ev WHERE name = 'screen_view' ORDER BY project_id, session_id, created_at DESC, id DESC
  )
  INSERT INTO sessions (
    project_id, id, profile_id, device_id, started_at, ended_at, duration_ms, event_count,
    screen_view_count, is_bounce, revenue, entry_path, entry_origin, exit_path, exit_origin, referrer, referrer_name, referrer_type, utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, region, city, device, brand, model, browser, browser_version, os, os_version
  )
  SELECT
      t.project_id, t.session_id, f.profile_id, f.device_id, t.started_at, t.ended_at,
      (extract(epoch FROM t.ended_at - t.started_at) * 1000)::bigint,
      t.event_count, t.screen_view_count, t.screen_view_count <= 1, t.revenue,
      en.path, en.origin, ex.path, ex.origin,
      f.referrer,
      f.referrer_name,
      f.referrer_type,
      f.utm_source,
      f.utm_medium,
      f.utm_campaign,
      f.utm_term,
      f.utm_content,
      f.country,
      f.region,
      f.city,
      f.device,
      f.brand,
      f.model,
      f.browser,
      f.browser_version,
      f.os,
      f.os_version
  FROM totals t
  JOIN firsts f USING (project_id, session_id)
  LEFT JOIN entries en USING (project_id, session_id)
  LEFT JOIN exits ex USING (project_id, session_id)
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
    os_version = excluded.os_version;
  GET DIAGNOSTICS touched = ROW_COUNT;

  UPDATE derived_state SET processed_xid = greatest(from_xid, next_xid), last_run_at = now()
  WHERE name = 'sessions';
  RETURN touched;
END;
$fn$;
