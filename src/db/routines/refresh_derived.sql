-- refresh_derived(): folds the events committed since the last run into every derived table, in
-- one transaction, and returns the number of sessions it recomputed. It is the entry point its
-- callers use (the Worker's cron trigger through src/queries/derived.ts, the seed, the tests):
-- incremental, idempotent, and safe to call at any time and concurrently. It runs the
-- families in turn:
-- - refresh_session_rollups (src/db/routines/refresh_session_rollups.sql): sessions, session
--   pages, and the hourly and daily session, page and visitor rollups;
-- - refresh_event_rollups (src/db/routines/refresh_event_rollups.sql): the hourly event rollups of
--   the charts, up to the snapshot xmin taken here first, their exact watermark;
-- - refresh_catalogue (src/db/routines/refresh_catalogue.sql): the discovery catalogue of event
--   names, keys and values, up to the same watermark;
-- - refresh_profile_summaries (src/db/routines/refresh_profile_summaries.sql): one row per profile,
--   up to the same watermark, its session counts from the sessions just written;
-- - refresh_profile_activity (src/db/routines/refresh_profile_activity.sql): each profile's local
--   days and the active-user and retention aggregates, up to the same watermark.
CREATE OR REPLACE FUNCTION refresh_derived() RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  -- Taken first: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  sessions_rebuilt boolean;
BEGIN
  -- Read before the session family moves them: a watermark at 0 (or absent) means it rebuilds whole.
  sessions_rebuilt := coalesce((SELECT min(processed_xid) FROM derived_state WHERE name IN ('sessions', 'rollups')), 0) = 0
    OR (SELECT count(*) FROM derived_state WHERE name IN ('sessions', 'rollups')) < 2;
  -- Takes the one-run-at-a-time lock (hashtext('refresh_derived')), held until commit.
  touched := refresh_session_rollups();
  PERFORM refresh_event_rollups(next_xid);
  PERFORM refresh_catalogue(next_xid);
  PERFORM refresh_profile_summaries(next_xid, sessions_rebuilt);
  -- The touched sessions (src/db/routines/refresh_session_rollups.sql), read up to here: on a
  -- first build a copy of every session, freed now rather than at commit
  -- (src/db/routines/free_temporary_tables.sql).
  PERFORM free_temporary_tables('touched_sessions', 'touched_before', 'touched_after', 'touched_pages_before',
    'touched_names_before', 'touched_pages', 'touched_names', 'rollup_zones');
  PERFORM refresh_profile_activity(next_xid);
  RETURN touched;
END;
$fn$;
