-- refresh_derived_unless_running(): refresh_derived() (src/db/routines/refresh_derived.sql) when no
-- other run holds its one-run-at-a-time lock; NULL at once, folding nothing, when one does. The
-- cron trigger calls this (src/queries/derived.ts). A run that takes longer than the minute between
-- two triggers (a busy project's ingest: docs/operations.md#what-the-derived-data-costs) would
-- otherwise queue a waiting transaction, and a connection, every minute, more than one run drains;
-- skipped, the next trigger after the run folds everything the skipped ones would have, in one run,
-- which also costs less than two (a session still running is folded once, not twice).
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
