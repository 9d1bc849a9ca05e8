-- session_bit_zones(rebuild_all): each project's timezone (UTC when it has none), and whether its
-- strings per project day are rebuilt whole in this run: on a full build of the strings
-- (`rebuild_all`), and when the timezone differs from the one they were built in
-- (session_bit_timezones). The strings keep their own record rather than rollup_timezones
-- (derived_zones, src/db/routines/derived_zones.sql): they are folded in a transaction of their own
-- (src/db/routines/refresh_session_strings.sql), which can begin after the session rollups have
-- recorded a project's new zone and would then never rebuild its strings.
CREATE OR REPLACE FUNCTION session_bit_zones(rebuild_all boolean)
RETURNS TABLE (project_id text, timezone text, rebuilt boolean)
LANGUAGE sql
STABLE
AS $fn$
  SELECT p.id, coalesce(p.timezone, 'UTC'), rebuild_all OR z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC')
  FROM projects p LEFT JOIN session_bit_timezones z ON z.project_id = p.id
$fn$;
