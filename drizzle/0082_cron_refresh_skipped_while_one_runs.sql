-- refresh_derived_unless_running(): refresh_derived() (src/db/routines/refresh_derived.sql) when no
-- other run holds its one-run-at-a-time lock; NULL at once, folding nothing, when one does. The
-- cron trigger calls this (src/queries/derived.ts). At a busy ingest a run can outlast the minute
-- between two triggers (docs/design/billion-events.md); waiting for it, each trigger would hold a
-- transaction and a connection in a queue that grows by one a minute and shrinks by one a run.
-- Skipped, the first trigger after the run folds everything since in one run, which costs less
-- than two (a session still running is folded once, not twice).
CREATE OR REPLACE FUNCTION refresh_derived_unless_running() RETURNS integer
LANGUAGE plpgsql
AS $fn$
BEGIN
  -- The same lock refresh_session_rollups takes (src/db/routines/refresh_session_rollups.sql):
  -- held by this transaction from here, so that call does not wait.
  IF NOT pg_try_advisory_xact_lock(hashtext('refresh_derived')) THEN
    RETURN NULL;
  END IF;
  RETURN refresh_derived();
END;
$fn$;
