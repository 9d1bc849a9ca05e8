-- signed_session_sums(sign): the select-list items of a session's contributions to the session
-- sums every session rollup carries (sessions, bounces, screen_views, duration_ms over the sessions
-- that have one, timed_sessions, revenue), each multiplied by `sign`, an SQL expression spliced
-- as is (a literal such as '-1', or a format placeholder such as '%2$s' that the caller fills
-- later). The session is `s`. One definition for the routines that build such rows from signed
-- sessions: refresh_rollups and refresh_pair_rollups (src/db/routines/refresh_rollups.sql,
-- refresh_pair_rollups.sql), which then sum the columns by these names.
CREATE OR REPLACE FUNCTION signed_session_sums(sign text) RETURNS text
LANGUAGE sql
IMMUTABLE
AS $fn$
  SELECT format('%1$s::integer AS sessions, CASE WHEN s.is_bounce THEN %1$s ELSE 0 END AS bounces,'
    ' %1$s * s.screen_view_count AS screen_views,'
    ' CASE WHEN s.duration_ms > 0 THEN %1$s * s.duration_ms ELSE 0 END AS duration_ms,'
    ' CASE WHEN s.duration_ms > 0 THEN %1$s ELSE 0 END AS timed_sessions, %1$s * s.revenue AS revenue', sign)
$fn$;
