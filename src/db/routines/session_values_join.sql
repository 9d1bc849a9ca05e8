-- session_values_join(source): a JOIN clause that pairs each session `s` of a query with every
-- value of the multi-valued dimensions it has, once each, as `f.dimension` and `f.value`: each
-- path and each event name (neither empty) that its events carry ('path', 'name'). A session
-- counts under each of its values, so the rows of one value hold exactly the sessions that a
-- filter "sessions with an event on path …" or "… with an event named …" keeps.
-- `source` says which rows are read: 'stored' (session_pages, session_names), 'before'
-- (touched_pages_before, touched_names_before: the touched sessions' rows as they were) or 'after'
-- (touched_pages, touched_names: as this run wrote them). A session has a page row per (origin,
-- path), so its paths are made distinct: a path seen on two origins would count it twice.
-- refresh_rollups, refresh_pair_rollups and refresh_page_dimension_rollups join it
-- (src/db/routines/); refresh_dimension_sketches reads the rows through the session's start
-- instead, since a sketch absorbs a repeated visitor.
CREATE OR REPLACE FUNCTION session_values_join(source text) RETURNS text
LANGUAGE sql
IMMUTABLE
AS $fn$
  SELECT format(' JOIN (SELECT DISTINCT project_id, session_id, ''path'' AS dimension, path AS value FROM %I'
    ' WHERE path <> '''' UNION ALL SELECT project_id, session_id, ''name'', name FROM %I WHERE name <> '''') AS f'
    ' ON f.project_id = s.project_id AND f.session_id = s.id',
    CASE source WHEN 'stored' THEN 'session_pages' WHEN 'before' THEN 'touched_pages_before' ELSE 'touched_pages' END,
    CASE source WHEN 'stored' THEN 'session_names' WHEN 'before' THEN 'touched_names_before' ELSE 'touched_names' END)
$fn$;
