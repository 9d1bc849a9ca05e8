-- refresh_session_rollups(): the session family of the derived tables. It derives `sessions`, one
-- row per (project_id, session_id), from the events, and then, in the same transaction, the
-- session and page rollups per hour and day with the session pages (refresh_rollups,
-- src/db/routines/refresh_rollups.sql), the visitor sketches per hour and day
-- (refresh_visitor_sketches, src/db/routines/refresh_visitor_sketches.sql) and per day and
-- dimension value (refresh_dimension_sketches, src/db/routines/refresh_dimension_sketches.sql),
-- the session aggregates per day and pair of dimension values (refresh_pair_rollups,
-- src/db/routines/refresh_pair_rollups.sql) and the page aggregates per day and dimension value
-- (refresh_page_dimension_rollups, src/db/routines/refresh_page_dimension_rollups.sql) and the
-- entry and exit pages per hour and day (refresh_entry_exit_rollups,
-- src/db/routines/refresh_entry_exit_rollups.sql), each session's property values
-- (refresh_session_properties, src/db/routines/refresh_session_properties.sql), so both query
-- paths always see the same data. It returns the number of sessions it wrote. The bit strings per
-- day over its sessions are folded from what it commits, in a transaction of their own
-- (refresh_session_strings, src/db/routines/refresh_session_strings.sql).
-- refresh_session_family (src/db/routines/refresh_session_family.sql) calls it, and the
-- one-run-at-a-time lock taken here bears the name of the entry point refresh_derived()
-- (src/db/routines/refresh_derived.sql).
--
-- It is the only writer of `sessions`. It is incremental (it recomputes only the sessions that
-- received events since its last run) and idempotent (a session is always recomputed from all of
-- its events, so running it again, or feeding the same events in one batch or in many, gives the
-- same rows).
--
-- "Since the last run" is tracked by the writing transaction's id (events.ingest_xid) rather than
-- by time or a sequence, so out-of-order commits are never missed: a run folds in every visible
-- row at or above the watermark, then moves the watermark to the oldest transaction that was
-- still open when it started. Rows it could not see yet all lie above that point; rows it saw
-- above it are folded in again next time, which is harmless because a run is idempotent.
--
-- Sessions are computed in one sorted pass: one sort of narrow rows by (session, time) feeds two
-- window aggregates and one group aggregate, and the first event's attributes are then fetched by
-- its id. (Joining four derived sets, first event, totals, entry and exit, behind a materialized
-- CTE was quadratic: the planner has no statistics for such a CTE, estimated a handful of rows and
-- chose nested loops, minutes for 50k events.) A cron run touches few sessions and takes
-- milliseconds. New sessions are inserted in the order they started (see the ORDER BY below);
-- existing rows keep their place.
--
-- The touched sessions are kept in a temporary table, and their rows and pages as they were before
-- this run in two others, so that the routines after the upsert can subtract what they were and add
-- what they are (the sketches: merge or rebuild). The first run, and any run after the 'rollups'
-- watermark was reset to 0 (by a migration that adds or reshapes a derived table), build every
-- derived table whole. A project whose timezone is new or changed gets all of its days rebuilt.
CREATE OR REPLACE FUNCTION refresh_session_rollups() RETURNS integer
LANGUAGE plpgsql
-- A bulk load sorts every new event once; give that sort room instead of spilling to disk.
SET work_mem = '256MB'
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
-- A run reaches the touched sessions' events, rows and pages by index, the newest rows of their
-- tables and cached. At the default cost of a random read (4) the planner judged a scan of all
-- 10M events and 8M session pages cheaper than 27,000 index lookups and took seconds
-- (10M events at 1,000 events/s: 40 s a run -> 31 s); every routine below runs with this too.
SET random_page_cost = 1.1
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  rollups_xid bigint;
  -- Taken before anything else: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  rebuild_all boolean;
BEGIN
  -- One run at a time: a concurrent caller waits here, then finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
  INSERT INTO derived_state (name) VALUES ('sessions'), ('rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'sessions';
  SELECT processed_xid INTO rollups_xid FROM derived_state WHERE name = 'rollups';

  rebuild_all := from_xid = 0 OR rollups_xid = 0;
  -- A whole build empties the sessions' pages, names and property values (TRUNCATE), which a strings
  -- run on another connection reads in another order: both would wait for the other. It waits here
  -- for a strings run under way, and none begins until it commits.
  IF rebuild_all THEN
    PERFORM pg_advisory_xact_lock(hashtext('refresh_session_strings'));
  END IF;

  DROP TABLE IF EXISTS pg_temp.touched_sessions, pg_temp.touched_before, pg_temp.touched_after, pg_temp.touched_pages_before,
    pg_temp.touched_names_before;
  CREATE TEMPORARY TABLE touched_sessions (project_id text, session_id text) ON COMMIT DROP;
  -- The touched sessions as they were before this run (none for new ones), their pages and names.
  CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  -- ...and as this run writes them (filled by the upsert below).
  CREATE TEMPORARY TABLE touched_after ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  CREATE TEMPORARY TABLE touched_pages_before ON COMMIT DROP AS SELECT * FROM session_pages WITH NO DATA;
  CREATE TEMPORARY TABLE touched_names_before ON COMMIT DROP AS SELECT * FROM session_names WITH NO DATA;
  IF from_xid > 0 THEN
    INSERT INTO touched_sessions SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid;
    ANALYZE touched_sessions;
    INSERT INTO touched_before SELECT s.*
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    ANALYZE touched_before;
    -- A session's pages carry its start: found through it, by the (project_id, started_at) index.
    INSERT INTO touched_pages_before SELECT p.*
    FROM touched_before b JOIN session_pages p ON p.project_id = b.project_id AND p.started_at = b.started_at AND p.session_id = b.id;
    ANALYZE touched_pages_before;
    INSERT INTO touched_names_before SELECT n.*
    FROM touched_before b JOIN session_names n ON n.project_id = b.project_id AND n.started_at = b.started_at AND n.session_id = b.id;
    ANALYZE touched_names_before;
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
    WHERE %1$s
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
  )%2$s
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
  -- New sessions are written in the order they started, as live ingest appends them, so a
  -- window's sessions share pages also after a bulk load: a filtered one-day query then reads a
  -- few hundred pages instead of one per session scattered over the whole table. A cron run
  -- sorts a handful of rows, and a bulk load does not slow down measurably (a 1M-event seed:
  -- 28.5 vs 29.3 s).
  ORDER BY s.started_at
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
  %3$s
  $sql$, CASE WHEN from_xid = 0 THEN 'true' ELSE
    '(e.project_id, e.session_id) IN (SELECT project_id, session_id FROM touched_sessions)' END,
    -- After a first run, the rows written are also kept as `touched_after`: every routine below
    -- reads the touched sessions from it rather than looking each one up again.
    CASE WHEN from_xid > 0 THEN ', upserted AS (' ELSE '' END,
    CASE WHEN from_xid > 0 THEN 'RETURNING sessions.*) INSERT INTO touched_after SELECT * FROM upserted' ELSE '' END);
  GET DIAGNOSTICS touched = ROW_COUNT;
  ANALYZE touched_after;

  PERFORM refresh_rollups(rebuild_all);
  PERFORM refresh_session_properties(rebuild_all);
  PERFORM refresh_visitor_sketches(rebuild_all);
  PERFORM refresh_dimension_sketches(rebuild_all);
  PERFORM refresh_pair_rollups(rebuild_all);
  PERFORM refresh_page_dimension_rollups(rebuild_all);
  PERFORM refresh_entry_exit_rollups(rebuild_all, next_xid);
  -- After a full build, fresh statistics ahead of autovacuum (which had not reached the 1.5 GB of
  -- pair rows 20 minutes after a 10M-event build): the next runs' upserts and the queries are
  -- planned from what the tables hold.
  IF rebuild_all THEN
    ANALYZE session_rollups, session_day_rollups, page_rollups, page_day_rollups, visitor_sketches,
      visitor_day_sketches, visitor_dimension_sketches, session_pair_rollups, page_dimension_rollups,
      entry_exit_rollups, entry_exit_day_rollups;
    -- Every session was written again: the strings are built whole from them too.
    UPDATE derived_state SET processed_xid = 0 WHERE name = 'session_bits';
  END IF;
  INSERT INTO rollup_timezones (project_id, timezone)
  SELECT id, coalesce(timezone, 'UTC') FROM projects
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE rollup_timezones.timezone IS DISTINCT FROM excluded.timezone;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now()
  WHERE name IN ('sessions', 'rollups');
  RETURN touched;
END;
$fn$;
