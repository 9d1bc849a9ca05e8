-- refresh_event_family(wait): the event family of refresh_derived (src/db/routines/refresh_derived.sql)
-- in one transaction, every part up to the snapshot xmin taken here first, their exact watermark:
-- - refresh_event_rollups (src/db/routines/refresh_event_rollups.sql): the hourly event rollups and
--   the event pairs per day of the charts;
-- - refresh_catalogue (src/db/routines/refresh_catalogue.sql): the discovery catalogue of event
--   names, keys and values;
-- - refresh_profile_activity (src/db/routines/refresh_profile_activity.sql): each profile's local
--   days and the active-user and retention aggregates.
-- It reads and writes none of the session family's tables (src/db/routines/refresh_session_family.sql),
-- so the two can run at once on two connections, as the cron trigger runs them (src/queries/derived.ts;
-- at 1,000 events/s a run then takes a fifth to a quarter less time, docs/design/billion-events.md).
-- Returns true once it ran. With `wait` it waits for a run under
-- way; without, it returns NULL at once, folding nothing, while another run holds the event
-- rollups' lock.
CREATE OR REPLACE FUNCTION refresh_event_family(wait boolean) RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
BEGIN
  -- The lock refresh_event_rollups takes: held by this transaction from here.
  IF NOT wait AND NOT pg_try_advisory_xact_lock(hashtext('refresh_event_rollups')) THEN
    RETURN NULL;
  END IF;
  PERFORM refresh_event_rollups(next_xid);
  PERFORM refresh_catalogue(next_xid);
  PERFORM refresh_profile_activity(next_xid);
  RETURN true;
END;
$fn$;
