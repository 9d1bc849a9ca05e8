-- refresh_derived() now also maintains the rollups (session_rollups, page_rollups,
-- visitor_sketches per hour, visitor_day_sketches per day of the project's timezone) in the same
-- transaction as `sessions`, so both query paths always see the same data. An hour's (a day's)
-- rows are recomputed from its sessions whenever one of them changed (the hours a touched session
-- started in before and after this run); the first run, and the first run after this migration
-- (watermark 'rollups' at 0), rebuild everything. A project whose timezone changed gets its day
-- sketches rebuilt.
--
-- The sessions part is 0002's, with the touched sessions kept in a temporary table so their old
-- start hours can be read before the upsert.

-- Visitor sketches of the units (hours or days) of `source` into `target` (its unit column
-- named `unit`). 64 hash bits of the visitor (hashtextextended, built in everywhere): the low 15
-- choose one of 2^15 registers, the lowest set bit of the other 49 gives its value (1-49, 50 when
-- none). Each plane is written as hex, 64 registers per 16 digits, the empty chunks between them
-- padded in by lpad; the cast to bit(32768) pads the tail with zeros.
CREATE OR REPLACE FUNCTION refresh_visitor_sketches(target text, unit text, unit_of_session text, source text) RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  EXECUTE format($sql$
  INSERT INTO %1$I (project_id, %2$I, plane, registers)
  SELECT project_id, unit, plane,
    ('x' || string_agg(lpad(to_hex(bits), (chunk - coalesce(previous_chunk, -1)) * 16, '0'), '' ORDER BY chunk))::varbit::bit(32768)
  FROM (
    SELECT project_id, unit, plane, chunk, bits,
      lag(chunk) OVER (PARTITION BY project_id, unit, plane ORDER BY chunk) AS previous_chunk
    FROM (
      SELECT project_id, unit, plane, register >> 6 AS chunk, bit_or(1::bigint << (63 - (register & 63))) AS bits
      FROM (
        SELECT project_id, unit, (h & 32767)::integer AS register,
          -- w & -w isolates the lowest set bit, a power of two: its log2 is exact after rounding.
          max(CASE WHEN w = 0 THEN 50 ELSE round(ln((w & -w)::float8) / ln(2.0))::integer + 1 END) AS value
        FROM (
          SELECT project_id, unit, h, (h >> 15) & 562949953421311 AS w
          FROM (
            SELECT s.project_id COLLATE "C" AS project_id, %3$s AS unit, hashtextextended(s.profile_id, 0) AS h
            FROM %4$s
          ) visitors
        ) hashed
        GROUP BY 1, 2, 3
      ) registers, generate_series(1, value) AS plane
      GROUP BY 1, 2, 3, 4
    ) plane_chunks
  ) ordered_chunks
  GROUP BY 1, 2, 3
  $sql$, target, unit, unit_of_session, source);
END;
$fn$;
--> statement-breakpoint
-- The rollups of some hours: of every hour when `units` is NULL, else of the (project_id, hour)
-- rows of the temporary table named by `units`.
CREATE OR REPLACE FUNCTION refresh_rollups(units text) RETURNS void
LANGUAGE plpgsql
-- JIT compiles the wide grouping-sets expressions for hundreds of milliseconds; the queries
-- here are sequential scans and aggregates that gain nothing from it.
SET jit = off
AS $fn$
DECLARE
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

  -- All sessions ('' dimension) and every breakdown dimension, in one pass. Empty strings are
  -- "not set", like NULL (the breakdown endpoints' rule).
  EXECUTE format($sql$
  INSERT INTO session_rollups (project_id, hour, dimension, name, prefix, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue)
  SELECT project_id, hour,
    CASE WHEN grouping(referrer) = 0 THEN 'referrer' WHEN grouping(referrer_name) = 0 THEN 'referrer_name'
      WHEN grouping(referrer_type) = 0 THEN 'referrer_type' WHEN grouping(region) = 0 THEN 'region'
      WHEN grouping(city) = 0 THEN 'city' WHEN grouping(country) = 0 THEN 'country'
      WHEN grouping(device) = 0 THEN 'device' WHEN grouping(brand) = 0 THEN 'brand'
      WHEN grouping(model) = 0 THEN 'model' WHEN grouping(browser_version) = 0 THEN 'browser_version'
      WHEN grouping(browser) = 0 THEN 'browser' WHEN grouping(os_version) = 0 THEN 'os_version'
      WHEN grouping(os) = 0 THEN 'os' WHEN grouping(utm_source) = 0 THEN 'utm_source'
      WHEN grouping(utm_medium) = 0 THEN 'utm_medium' WHEN grouping(utm_campaign) = 0 THEN 'utm_campaign'
      WHEN grouping(utm_term) = 0 THEN 'utm_term' WHEN grouping(utm_content) = 0 THEN 'utm_content'
      ELSE '' END,
    CASE WHEN grouping(referrer) = 0 THEN referrer WHEN grouping(referrer_name) = 0 THEN referrer_name
      WHEN grouping(referrer_type) = 0 THEN referrer_type WHEN grouping(region) = 0 THEN region
      WHEN grouping(city) = 0 THEN city WHEN grouping(country) = 0 THEN country
      WHEN grouping(device) = 0 THEN device WHEN grouping(brand) = 0 THEN brand
      WHEN grouping(model) = 0 THEN model WHEN grouping(browser_version) = 0 THEN browser_version
      WHEN grouping(browser) = 0 THEN browser WHEN grouping(os_version) = 0 THEN os_version
      WHEN grouping(os) = 0 THEN os WHEN grouping(utm_source) = 0 THEN utm_source
      WHEN grouping(utm_medium) = 0 THEN utm_medium WHEN grouping(utm_campaign) = 0 THEN utm_campaign
      WHEN grouping(utm_term) = 0 THEN utm_term WHEN grouping(utm_content) = 0 THEN utm_content END,
    CASE WHEN grouping(region) = 0 OR grouping(city) = 0 THEN country
      WHEN grouping(browser_version) = 0 THEN browser WHEN grouping(os_version) = 0 THEN os END,
    count(*), count(*) FILTER (WHERE is_bounce), sum(screen_view_count),
    coalesce(sum(duration_ms) FILTER (WHERE duration_ms > 0), 0), count(*) FILTER (WHERE duration_ms > 0),
    sum(revenue)
  FROM (
    SELECT s.project_id COLLATE "C" AS project_id, date_trunc('hour', s.started_at, 'UTC') AS hour, s.is_bounce, s.screen_view_count, s.duration_ms, s.revenue,
      nullif(s.referrer, '') AS referrer, nullif(s.referrer_name, '') AS referrer_name, nullif(s.referrer_type, '') AS referrer_type,
      nullif(s.country, '') AS country, nullif(s.region, '') AS region, nullif(s.city, '') AS city,
      nullif(s.device, '') AS device, nullif(s.brand, '') AS brand, nullif(s.model, '') AS model,
      nullif(s.browser, '') AS browser, nullif(s.browser_version, '') AS browser_version,
      nullif(s.os, '') AS os, nullif(s.os_version, '') AS os_version,
      nullif(s.utm_source, '') AS utm_source, nullif(s.utm_medium, '') AS utm_medium, nullif(s.utm_campaign, '') AS utm_campaign,
      nullif(s.utm_term, '') AS utm_term, nullif(s.utm_content, '') AS utm_content
    FROM %1$s
  ) sessions_of_hours
  GROUP BY GROUPING SETS (
    (project_id, hour), (project_id, hour, referrer), (project_id, hour, referrer_name), (project_id, hour, referrer_type),
    (project_id, hour, country), (project_id, hour, region, country), (project_id, hour, city, country),
    (project_id, hour, device), (project_id, hour, brand), (project_id, hour, model),
    (project_id, hour, browser), (project_id, hour, browser_version, browser), (project_id, hour, os), (project_id, hour, os_version, os),
    (project_id, hour, utm_source), (project_id, hour, utm_medium), (project_id, hour, utm_campaign), (project_id, hour, utm_term), (project_id, hour, utm_content)
  )
  $sql$, source);

  -- Pages: per session and page first (a session counts once per page), then per page. The
  -- sessions of the hours come first (materialized), so their screen views are reached through
  -- the (project_id, session_id) index whatever the planner believes about the tables' sizes.
  EXECUTE format($sql$
  WITH hour_sessions AS MATERIALIZED (
    SELECT s.project_id COLLATE "C" AS project_id, s.id, s.is_bounce, date_trunc('hour', s.started_at, 'UTC') AS hour
    FROM %1$s
  )
  INSERT INTO page_rollups (project_id, hour, origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views)
  SELECT project_id, hour, origin, path, max(title), count(*), sum(views), count(*) FILTER (WHERE is_bounce), sum(duration_ms), sum(timed_views)
  FROM (
    SELECT hs.project_id, hs.hour, e.origin, e.path, e.session_id, hs.is_bounce,
      max(e.title) AS title, count(*) AS views,
      coalesce(sum(e.duration) FILTER (WHERE e.duration > 0), 0) AS duration_ms, count(*) FILTER (WHERE e.duration > 0) AS timed_views
    FROM hour_sessions hs
    JOIN events e ON e.project_id = hs.project_id AND e.session_id = hs.id AND e.name = 'screen_view'
    GROUP BY 1, 2, 3, 4, 5, 6
  ) page_sessions
  GROUP BY 1, 2, 3, 4
  $sql$, source);

  PERFORM refresh_visitor_sketches('visitor_sketches', 'hour', $$date_trunc('hour', s.started_at, 'UTC')$$, source);
END;
$fn$;
--> statement-breakpoint
-- Day sketches of the (project_id, day) rows of the temporary table `rollup_days` (days are local
-- midnights in its `timezone`).
CREATE OR REPLACE FUNCTION refresh_day_sketches() RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  DELETE FROM visitor_day_sketches r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;
  PERFORM refresh_visitor_sketches('visitor_day_sketches', 'day',
    $$date_trunc('day', s.started_at, d.timezone)$$,
    $$rollup_days d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day
      AND s.started_at < (d.day AT TIME ZONE d.timezone + interval '1 day') AT TIME ZONE d.timezone$$);
END;
$fn$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION refresh_derived() RETURNS integer
LANGUAGE plpgsql
-- A bulk load sorts every new event once; give that sort room instead of spilling to disk.
SET work_mem = '256MB'
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  rollups_xid bigint;
  -- Taken before anything else: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
BEGIN
  -- One run at a time: a concurrent caller waits here, then finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
  INSERT INTO derived_state (name) VALUES ('sessions'), ('rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'sessions';
  SELECT processed_xid INTO rollups_xid FROM derived_state WHERE name = 'rollups';

  DROP TABLE IF EXISTS pg_temp.touched_sessions, pg_temp.touched_starts, pg_temp.rollup_hours, pg_temp.rollup_days;
  CREATE TEMPORARY TABLE touched_sessions (project_id text, session_id text) ON COMMIT DROP;
  CREATE TEMPORARY TABLE touched_starts (project_id text, started_at timestamptz) ON COMMIT DROP;
  IF from_xid > 0 THEN
    INSERT INTO touched_sessions SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid;
    ANALYZE touched_sessions;
    -- When these sessions started before this run: the rollups of those hours and days lose them or change.
    INSERT INTO touched_starts SELECT s.project_id, s.started_at
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
  END IF;

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
    '(e.project_id, e.session_id) IN (SELECT project_id, session_id FROM touched_sessions)' END);
  GET DIAGNOSTICS touched = ROW_COUNT;

  IF from_xid = 0 OR rollups_xid = 0 THEN
    PERFORM refresh_rollups(NULL);
    TRUNCATE visitor_day_sketches, rollup_timezones;
  ELSE
    -- ...and when they start now.
    INSERT INTO touched_starts SELECT s.project_id, s.started_at
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    CREATE TEMPORARY TABLE rollup_hours ON COMMIT DROP AS
      SELECT DISTINCT project_id, date_trunc('hour', started_at, 'UTC') AS hour FROM touched_starts;
    ANALYZE rollup_hours;
    PERFORM refresh_rollups('rollup_hours');
  END IF;

  -- Day sketches: every day of the projects whose timezone is new or changed (all of them on a
  -- rebuild), and the days the touched sessions started in, before and now, for the others.
  CREATE TEMPORARY TABLE rollup_days (project_id text, day timestamptz, timezone text) ON COMMIT DROP;
  WITH zones AS (
    SELECT p.id AS project_id, coalesce(p.timezone, 'UTC') AS timezone, z.timezone AS built_in
    FROM projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  ), rezoned AS (
    DELETE FROM visitor_day_sketches v USING zones
    WHERE v.project_id = zones.project_id AND zones.built_in IS DISTINCT FROM zones.timezone
    RETURNING v.project_id
  )
  INSERT INTO rollup_days
  SELECT DISTINCT s.project_id, date_trunc('day', s.started_at, zones.timezone), zones.timezone
  FROM zones JOIN sessions s ON s.project_id = zones.project_id
  WHERE zones.built_in IS DISTINCT FROM zones.timezone
  UNION
  SELECT DISTINCT t.project_id, date_trunc('day', t.started_at, zones.timezone), zones.timezone
  FROM touched_starts t JOIN zones ON zones.project_id = t.project_id
  WHERE zones.built_in IS NOT DISTINCT FROM zones.timezone;
  ANALYZE rollup_days;
  PERFORM refresh_day_sketches();
  INSERT INTO rollup_timezones (project_id, timezone)
  SELECT id, coalesce(timezone, 'UTC') FROM projects
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE rollup_timezones.timezone IS DISTINCT FROM excluded.timezone;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now()
  WHERE name IN ('sessions', 'rollups');
  RETURN touched;
END;
$fn$;
