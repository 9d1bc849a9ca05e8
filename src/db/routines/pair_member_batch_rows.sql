-- pair_member_batch_rows(): how many member rows (visitors and sessions per local day, event name
-- and values) one statement of refresh_event_pair_rollups counts at most
-- (src/db/routines/refresh_event_pair_rollups.sql). It counts them in batches of whole days, in
-- day order: a day of 27,000 sessions holds tens of thousands of rows, whose per-member groups fit
-- in memory, while a run that touches many small days (late events, a small project's first
-- build, a test) counts them in one statement per kind of row instead of one per day and kind.
-- A test database may replace it with a small number to cut a few days into several batches.
CREATE OR REPLACE FUNCTION pair_member_batch_rows() RETURNS bigint
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT 100000::bigint
$fn$;
