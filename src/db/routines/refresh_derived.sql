-- refresh_derived(): folds the events committed since the last run into every derived table, in
-- one transaction, and returns the number of sessions it recomputed. It is the entry point its
-- callers use on one connection (the seed, the tests, pipelines; the Worker's cron trigger runs its
-- two families at once instead, src/queries/derived.ts): incremental, idempotent, and safe to call
-- at any time and concurrently. It runs the two families and the session strings in turn, each
-- waiting for a run of it under way:
-- - refresh_session_family (src/db/routines/refresh_session_family.sql): sessions, their rollups,
--   pairs and sketches, and the profile summaries;
-- - refresh_session_strings (src/db/routines/refresh_session_strings.sql): the bit strings per day
--   over the sessions just written;
-- - refresh_event_family (src/db/routines/refresh_event_family.sql): the charts' event rollups,
--   the discovery catalogue and the profiles' activity.
CREATE OR REPLACE FUNCTION refresh_derived() RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  touched integer;
BEGIN
  -- Takes the one-run-at-a-time lock (hashtext('refresh_derived')), held until commit.
  touched := refresh_session_family(true);
  PERFORM refresh_session_strings(true);
  PERFORM refresh_event_family(true);
  RETURN touched;
END;
$fn$;
