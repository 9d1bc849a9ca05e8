-- refresh_session_strings(wait): the session strings of refresh_derived (src/db/routines/refresh_derived.sql)
-- in a transaction of their own, and the number of sessions they took in: the bit strings per day
-- over each day's sessions and visitors (refresh_session_bits, src/db/routines/refresh_session_bits.sql),
-- from the sessions the session family (src/db/routines/refresh_session_family.sql) has committed.
--
-- They read only what the session family writes (sessions, their pages, names and property
-- values) and write nothing it reads, so the cron trigger runs them on the event family's
-- connection once that family is done, while the next session family runs on the other
-- (src/queries/derived.ts): the session family's work is then shared by both cores of the server.
-- The strings so lag the session rollups by up to a run. An answer from the strings reads the day
-- rollups only for the bounds of its ranking, and the sessions' property values only to ask
-- whether the strings can answer; for that run they may be a run ahead.
--
-- Beside a session family, their statements must all see one state of its tables: a run reads the
-- sessions several times (visitors numbered, then the sessions of a day, then a visitor's), and a
-- family committing in between would leave a new visitor without a number. So a run beside a
-- family is a REPEATABLE READ transaction (the cron's, src/queries/derived.ts); in any other
-- isolation it takes the family's lock first and runs alone, as in refresh_derived(), which holds
-- it already. A family that rebuilds whole waits for a strings run under way
-- (src/db/routines/refresh_session_rollups.sql).
--
-- Their own watermark ('session_bits' in derived_state) is a transaction id like the others: the
-- sessions with an event at or above it are taken in, read as stored, and the watermark moves to
-- the session family's (every event below it is in `sessions`, since the family's run that set it
-- committed before this one began). A session whose events are visible but not yet folded is taken
-- in as stored (or not at all, when it has no row yet) and again next time: its events are at or
-- above the new watermark. A watermark at 0 (or absent) builds every string whole; the session
-- family sets it to 0 when it rebuilds whole itself (src/db/routines/refresh_session_rollups.sql).
-- With `wait` it waits for a run under way; without, it returns NULL at once while one holds the lock.
CREATE OR REPLACE FUNCTION refresh_session_strings(wait boolean) RETURNS integer
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
-- As in refresh_session_rollups: the touched sessions are reached by index, not by a scan.
SET random_page_cost = 1.1
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  sessions_xid bigint;
  rebuild_all boolean;
  taken integer := 0;
BEGIN
  -- The family's lock first, as refresh_derived() takes them, so that the two never wait for each other.
  IF current_setting('transaction_isolation') NOT IN ('repeatable read', 'serializable') THEN
    IF wait THEN
      PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
    ELSIF NOT pg_try_advisory_xact_lock(hashtext('refresh_derived')) THEN
      RETURN NULL;
    END IF;
  END IF;
  IF wait THEN
    PERFORM pg_advisory_xact_lock(hashtext('refresh_session_strings'));
  ELSIF NOT pg_try_advisory_xact_lock(hashtext('refresh_session_strings')) THEN
    RETURN NULL;
  END IF;
  SELECT processed_xid INTO sessions_xid FROM derived_state WHERE name = 'sessions';
  IF coalesce(sessions_xid, 0) = 0 THEN
    RETURN 0;
  END IF;
  INSERT INTO derived_state (name) VALUES ('session_bits') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'session_bits';
  rebuild_all := from_xid = 0;

  PERFORM free_temporary_tables('string_sessions');
  CREATE TEMPORARY TABLE string_sessions ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  IF NOT rebuild_all THEN
    INSERT INTO string_sessions SELECT s.*
    FROM (SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid) AS t
    JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    GET DIAGNOSTICS taken = ROW_COUNT;
    ANALYZE string_sessions;
  END IF;

  PERFORM refresh_session_bits(rebuild_all);
  IF rebuild_all THEN
    SELECT count(*) INTO taken FROM sessions;
    ANALYZE session_day_bits, session_day_slices, page_day_bits, page_day_slices, visitor_ordinals, visitor_day_bits,
      visitor_day_mixed, session_day_ordinals;
  END IF;
  PERFORM free_temporary_tables('string_sessions');

  -- Moved only from where this run began: a session family that rebuilt whole meanwhile set it to
  -- 0, and the next run must build the strings whole.
  UPDATE derived_state SET processed_xid = greatest(processed_xid, sessions_xid), last_run_at = now()
  WHERE name = 'session_bits' AND processed_xid = from_xid;
  RETURN taken;
END;
$fn$;
