-- property_day_bounds(known, met): the property paths a run met in each project day, with their
-- values there so far, within the bounds of a day's property strings
-- (src/db/routines/property_day_value_limit.sql, property_day_path_limit.sql). `known` is the
-- table of what earlier runs kept (property_day_paths for the session strings,
-- src/db/routines/refresh_session_bits.sql; event_property_day_paths, with its `marked`, for the
-- event strings, refresh_event_bits.sql); `met` the run's (project_id, day, path, value) rows, a
-- NULL value marking an object, an array or a long text there. Per (project, day, path): `names`,
-- its values so far, NULL once it passed a bound (and from then on); `had_strings`, whether it had
-- values before this run, so that the run that takes a path past a bound still writes its strings
-- of the day and a later one deletes them; `marked`, whether some row of the day is a mark. The
-- value bound comes first; then the paths with their first values of the day within it take the
-- places after those that have values there, in path order (a path past the value bound, or with
-- marks alone, takes none; one that had marks alone takes a place once it has values).
CREATE OR REPLACE FUNCTION property_day_bounds(known regclass, met regclass)
RETURNS TABLE (project_id text, day timestamptz, path text[], had_strings boolean, marked boolean, names text[])
LANGUAGE plpgsql
AS $fn$
DECLARE
  known_marked constant text := CASE WHEN EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = known
    AND a.attname = 'marked' AND NOT a.attisdropped) THEN 'coalesce(o.marked, false)' ELSE 'false' END;
BEGIN
  RETURN QUERY EXECUTE format($sql$
    WITH m AS (
      SELECT r.project_id, r.day, r.path, array_agg(DISTINCT r.value) FILTER (WHERE r.value IS NOT NULL) AS names,
        bool_or(r.value IS NULL) AS marked
      FROM %2$s r GROUP BY 1, 2, 3
    ),
    merged AS (
      SELECT m.project_id, m.day, m.path, coalesce(cardinality(o.names), 0) > 0 AS had_strings,
        m.marked OR %3$s AS marked,
        CASE WHEN o.path IS NOT NULL AND o.names IS NULL THEN NULL
          ELSE (SELECT coalesce(array_agg(DISTINCT v.name ORDER BY v.name), '{}')
            FROM unnest(coalesce(o.names, '{}') || coalesce(m.names, '{}')) AS v(name)) END AS names
      FROM m LEFT JOIN %1$s o ON o.project_id = m.project_id AND o.path = m.path AND o.day = m.day
    ),
    bounded AS (
      SELECT g.project_id, g.day, g.path, g.had_strings, g.marked,
        CASE WHEN cardinality(g.names) <= property_day_value_limit() THEN g.names END AS names
      FROM merged g
    ),
    placed AS (
      SELECT b.*, CASE WHEN b.had_strings OR coalesce(cardinality(b.names), 0) = 0 THEN 0 ELSE (SELECT count(*)
          FROM %1$s o WHERE o.project_id = b.project_id AND o.day = b.day AND cardinality(o.names) > 0)
        + row_number() OVER (PARTITION BY b.project_id, b.day, b.had_strings OR coalesce(cardinality(b.names), 0) = 0
          ORDER BY b.path) END AS place
      FROM bounded b
    )
    SELECT p.project_id::text, p.day::timestamptz, p.path, p.had_strings, p.marked,
      CASE WHEN p.place <= property_day_path_limit() THEN p.names END
    FROM placed p $sql$, known, met, known_marked);
END;
$fn$;
