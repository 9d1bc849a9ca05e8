-- session_path_join(pages): a JOIN clause that pairs each session `s` of a query with every path
-- (not empty) that its rows in a table of session pages carry, once each, as `f.path`. `pages`
-- is session_pages or a temporary copy of some of its rows (touched_pages, touched_pages_before).
-- A session has a page row per (origin, path), so a path seen on two origins would otherwise
-- count the session twice. These are the rows of the 'path' dimension, which answer a filter
-- "sessions with an event on path …" (a multi-valued dimension: a session counts under each of its
-- paths), built by refresh_rollups, refresh_pair_rollups and refresh_page_dimension_rollups
-- (src/db/routines/). refresh_dimension_sketches joins the pages themselves: a sketch absorbs a
-- repeated visitor.
CREATE OR REPLACE FUNCTION session_path_join(pages text) RETURNS text
LANGUAGE sql
IMMUTABLE
AS $fn$
  SELECT format(' JOIN (SELECT DISTINCT project_id, session_id, path FROM %I WHERE path <> '''') AS f'
    ' ON f.project_id = s.project_id AND f.session_id = s.id', pages)
$fn$;
