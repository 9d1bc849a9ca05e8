-- refresh_session_family(wait): the session family of refresh_derived (src/db/routines/refresh_derived.sql)
-- in one transaction, and the number of sessions it recomputed:
-- - refresh_session_rollups (src/db/routines/refresh_session_rollups.sql): sessions, session
--   pages, and the hourly and daily session, page and visitor rollups, the pairs and the sketches
--   per value (the strings over them follow in a transaction of their own,
--   src/db/routines/refresh_session_strings.sql);
-- - refresh_profile_summaries (src/db/routines/refresh_profile_summaries.sql): one row per profile,
--   its session counts from the sessions just written.
-- It reads and writes none of the event family's tables (src/db/routines/refresh_event_family.sql),
-- so the two can run at once on two connections, as the cron trigger runs them
-- (src/queries/derived.ts). With `wait` it waits for a run under way, as refresh_derived() does;
-- without, it returns NULL at once, folding nothing, while another run holds the lock.
CREATE OR REPLACE FUNCTION refresh_session_family(wait boolean) RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  -- Taken first: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  sessions_rebuilt boolean;
BEGIN
  -- The lock refresh_session_rollups takes, one run at a time: held by this transaction from here.
  IF NOT wait AND NOT pg_try_advisory_xact_lock(hashtext('refresh_derived')) THEN
    RETURN NULL;
  END IF;
  -- Read before the session family moves them: a watermark at 0 (or absent) means it rebuilds whole.
  sessions_rebuilt := coalesce((SELECT min(processed_xid) FROM derived_state WHERE name IN ('sessions', 'rollups')), 0) = 0
    OR (SELECT count(*) FROM derived_state WHERE name IN ('sessions', 'rollups')) < 2;
  touched := refresh_session_rollups();
  PERFORM refresh_profile_summaries(next_xid, sessions_rebuilt);
  -- The touched sessions (src/db/routines/refresh_session_rollups.sql): on a first build a copy of
  -- every session, freed now rather than at commit (src/db/routines/free_temporary_tables.sql).
  PERFORM free_temporary_tables('touched_sessions', 'touched_before', 'touched_after', 'touched_pages_before',
    'touched_names_before', 'touched_pages', 'touched_names', 'rollup_zones');
  RETURN touched;
END;
$fn$;
