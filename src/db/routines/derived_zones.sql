-- derived_zones(rebuild_all): each project's timezone (UTC when it has none), and whether its rows
-- per project day are rebuilt whole in this run: on a full build (`rebuild_all`), and when the
-- timezone differs from the one they were built in (rollup_timezones, which
-- refresh_session_rollups, src/db/routines/refresh_session_rollups.sql, updates only after every
-- routine per project day has run). refresh_dimension_sketches and refresh_pair_rollups
-- (src/db/routines/refresh_dimension_sketches.sql, refresh_pair_rollups.sql) read it.
CREATE OR REPLACE FUNCTION derived_zones(rebuild_all boolean)
RETURNS TABLE (project_id text, timezone text, rebuilt boolean)
LANGUAGE sql
STABLE
AS $fn$
  SELECT p.id, coalesce(p.timezone, 'UTC'), rebuild_all OR z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC')
  FROM projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
$fn$;
