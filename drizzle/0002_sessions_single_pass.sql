-- refresh_derived(), same contract as in 0001, computed in one sorted pass.
--
-- The first version joined four derived sets (first event, totals, entry, exit) behind a
-- materialized CTE. The planner has no statistics for such a CTE, estimated a handful of rows and
-- chose nested loops: quadratic, minutes for 50k events. Here one sort of narrow rows by
-- (session, time) feeds two window aggregates and one group aggregate; the first event's
-- attributes are then fetched by its id. A cron run touches few sessions and takes milliseconds.
CREATE OR REPLACE FUNCTION refresh_derived() RETURNS integer
LANGUAGE plpgsql
-- A bulk load sorts every new event once; give that sort room instead of spilling to disk.
SET work_mem = '256MB'
AS $fn$
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
    WHERE %s
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
  )
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
  $sql$, CASE WHEN from_xid = 0 THEN 'true' ELSE
    '(e.project_id, e.session_id) IN (SELECT project_id, session_id FROM events WHERE ingest_xid >= $1)' END)
  USING from_xid;
  GET DIAGNOSTICS touched = ROW_COUNT;

  UPDATE derived_state SET processed_xid = greatest(from_xid, next_xid), last_run_at = now()
  WHERE name = 'sessions';
  RETURN touched;
END;
$fn$;
