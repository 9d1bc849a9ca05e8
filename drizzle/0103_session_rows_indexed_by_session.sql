-- replace_session_rows(target, rows_now, rows_before, rebuild_all): makes the rows of `target`
-- (session_pages or session_names: rows of one session each, carrying its project_id, session_id
-- and started_at) of the touched sessions what `rows_now` holds, given `rows_before`, what they
-- were (refresh_session_rollups, src/db/routines/refresh_session_rollups.sql). refresh_rollups
-- (src/db/routines/refresh_rollups.sql) calls it for both tables.
--
-- Rows that are the same are left in place: a session that only grew changed its last page and
-- added new ones, and deleting and writing all of a touched session's pages again took 3 s of a
-- run at 1,000 events/s. The stored rows are found through the session's start (`touched_before`),
-- which leads their indexes. On a full build (rebuild_all) the table has just been emptied and every
-- row is written.
--
-- The insert is two statements, not one with `rebuild_all OR NOT EXISTS`: under an OR the NOT
-- EXISTS stays a subplan run per row, a scan of the old rows for each new one (minutes at 1,000
-- events/s). Written in time order, a window's rows sit together: a one-day page list then reads
-- a ninetieth of a 90-day table's pages, not rows scattered over all of them (10M events:
-- 0.65 s -> 0.15 s). Later runs append recent sessions, which keeps the order.
--
-- Each side is looked up per row of the other by session, so both are indexed by it first: the
-- planner estimated the stored rows of 17,890 touched sessions at one (their start and id are
-- matched as if independent) and looked each up by a scan of all of the new rows, 20 s of a run at
-- 1,000 events/s on 10M events for session_properties; with the index a misestimate costs a probe.
CREATE OR REPLACE FUNCTION replace_session_rows(target regclass, rows_now regclass, rows_before regclass,
  rebuild_all boolean) RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  IF rebuild_all THEN
    EXECUTE format('INSERT INTO %s SELECT * FROM %s ORDER BY started_at', target, rows_now);
    RETURN;
  END IF;
  EXECUTE format('CREATE INDEX ON %s (project_id, session_id)', rows_now);
  EXECUTE format('CREATE INDEX ON %s (project_id, session_id)', rows_before);
  EXECUTE format('DELETE FROM %1$s r USING touched_before b'
    ' WHERE r.project_id = b.project_id AND r.started_at = b.started_at AND r.session_id = b.id'
    ' AND NOT EXISTS (SELECT 1 FROM %2$s t WHERE t.project_id = r.project_id AND t.session_id = r.session_id'
    ' AND ROW(t.*) IS NOT DISTINCT FROM ROW(r.*))', target, rows_now);
  EXECUTE format('INSERT INTO %1$s SELECT * FROM %2$s t'
    ' WHERE NOT EXISTS (SELECT 1 FROM %3$s b WHERE b.project_id = t.project_id AND b.session_id = t.session_id'
    ' AND ROW(b.*) IS NOT DISTINCT FROM ROW(t.*))'
    ' ORDER BY started_at', target, rows_now, rows_before);
END;
$fn$;
