-- refresh_entry_exit_rollups(rebuild_all, next_xid): the entry and exit pages per hour and per
-- project day (entry_exit_rollups, entry_exit_day_rollups; src/db/schema/entry-exit-rollups.ts)
-- of the sessions refresh_session_rollups (src/db/routines/refresh_session_rollups.sql) has just
-- derived, which calls it after refresh_rollups (src/db/routines/refresh_rollups.sql) with the
-- same temporary tables: `touched_before` and `touched_after` (the touched sessions as they were
-- and as they are now) and `rollup_zones` (each project's zone, and whether its day rows are
-- rebuilt whole in this run).
--
-- A session with a screen view counts twice: under its entry page (mode 'entry', its first screen
-- view's origin and path) and its exit page ('exit', its last). Every column is a sum, so the rows
-- are maintained by difference (add_rollup_rows, src/db/routines/add_rollup_rows.sql): the touched
-- sessions as they were are subtracted and as they are now added. A full build, the first run
-- after these tables were added (no derived_state('entry_exit') row yet: they are built from every
-- stored session without rebuilding the other rollups), and a project whose timezone changed (its
-- day rows) write from all sessions.
CREATE OR REPLACE FUNCTION refresh_entry_exit_rollups(rebuild_all boolean, next_xid bigint) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['rollup_entry_exit'];
  sums text[] := ARRAY['sessions', 'bounces', 'screen_views', 'revenue'];
  -- The sessions with a screen view, once per mode, narrow and signed: %1$s yields them as `s`
  -- with their project's zone as `z`, %2$s is the sign, %3$s and %4$s whether hour and day count.
  pages_of text := 'SELECT s.project_id COLLATE "C" AS project_id, m.mode,'
    ' CASE WHEN %3$s THEN date_bin(''1 hour'', s.started_at, timestamptz ''2000-01-01 00:00:00+00'') END AS hour,'
    ' CASE WHEN %4$s THEN date_trunc(''day'', s.started_at, z.timezone) END AS day,'
    ' CASE m.mode WHEN ''entry'' THEN s.entry_origin ELSE s.exit_origin END COLLATE "C" AS origin,'
    ' CASE m.mode WHEN ''entry'' THEN s.entry_path ELSE s.exit_path END COLLATE "C" AS path,'
    ' %2$s::integer AS sessions, CASE WHEN s.is_bounce THEN %2$s ELSE 0 END AS bounces,'
    ' %2$s * s.screen_view_count::bigint AS screen_views, %2$s * s.revenue AS revenue'
    ' FROM %1$s CROSS JOIN (VALUES (''entry''), (''exit'')) AS m(mode) WHERE s.screen_view_count > 0';
  -- Their sums per unit (%1$I, `hour` or `day`) and page.
  page_groups text := 'SELECT project_id, mode, %1$I, origin, path, sum(sessions) AS sessions, sum(bounces) AS bounces,'
    ' sum(screen_views) AS screen_views, sum(revenue) AS revenue FROM rollup_entry_exit'
    ' WHERE %1$I IS NOT NULL GROUP BY 1, 2, 3, 4, 5';
  build_all boolean := rebuild_all OR NOT EXISTS (SELECT 1 FROM derived_state WHERE name = 'entry_exit');
  rezoned boolean;
BEGIN
  rezoned := NOT build_all AND EXISTS (SELECT 1 FROM rollup_zones WHERE rollup_zones.rebuilt);
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  IF build_all THEN
    TRUNCATE entry_exit_rollups, entry_exit_day_rollups;
    EXECUTE 'CREATE TEMPORARY TABLE rollup_entry_exit ON COMMIT DROP AS '
      || format(pages_of, 'sessions s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'true');
  ELSIF rezoned THEN
    EXECUTE 'DELETE FROM entry_exit_day_rollups r USING rollup_zones z WHERE r.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 'r');
    EXECUTE 'CREATE TEMPORARY TABLE rollup_entry_exit ON COMMIT DROP AS '
      || format(pages_of, 'rollup_zones z JOIN sessions s ON s.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('rollup_zones', 's'), '1', 'false', 'true');
  END IF;
  IF build_all OR rezoned THEN
    ANALYZE rollup_entry_exit;
    EXECUTE format('INSERT INTO entry_exit_rollups (project_id, mode, hour, origin, path, %s) ', array_to_string(sums, ', '))
      || format(page_groups, 'hour');
    EXECUTE format('INSERT INTO entry_exit_day_rollups (project_id, mode, day, origin, path, %s) ', array_to_string(sums, ', '))
      || format(page_groups, 'day');
    PERFORM free_temporary_tables('rollup_entry_exit');
  END IF;
  IF NOT build_all THEN
    -- By difference; the day rows of the projects rebuilt above are left out.
    EXECUTE 'CREATE TEMPORARY TABLE rollup_entry_exit ON COMMIT DROP AS '
      || format(pages_of, 'touched_before s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '-1', 'true', 'NOT z.rebuilt')
      || ' UNION ALL '
      || format(pages_of, 'touched_after s LEFT JOIN rollup_zones z ON z.project_id = s.project_id', '1', 'true', 'NOT z.rebuilt');
    ANALYZE rollup_entry_exit;
    PERFORM add_rollup_rows('entry_exit_rollups', ARRAY['project_id', 'mode', 'hour', 'origin', 'path'], sums,
      format(page_groups, 'hour'), true);
    PERFORM add_rollup_rows('entry_exit_day_rollups', ARRAY['project_id', 'mode', 'day', 'origin', 'path'], sums,
      format(page_groups, 'day'), true);
  END IF;
  INSERT INTO derived_state (name, processed_xid, last_run_at) VALUES ('entry_exit', next_xid, now())
  ON CONFLICT (name) DO UPDATE SET processed_xid = greatest(derived_state.processed_xid, excluded.processed_xid),
    last_run_at = excluded.last_run_at;
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
