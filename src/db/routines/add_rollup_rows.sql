-- add_rollup_rows(target, keys, sums, source, by_difference): writes the rows of `source`, a
-- SELECT of the columns `keys` and then `sums` by those names, into the rollup table `target`,
-- whose unique constraint `<target>_key` is on the key columns. The rollups maintained by
-- difference write through it: refresh_pair_rollups and refresh_page_dimension_rollups
-- (src/db/routines/refresh_pair_rollups.sql, refresh_page_dimension_rollups.sql).
--
-- - Not `by_difference` (a build, into groups that do not exist): plain inserts.
-- - `by_difference`: the rows are signed changes, the touched sessions as they were subtracted and
--   as they are added. Each is added to its group's sums, or starts the group; a row whose sums
--   are all 0 (a session that changed nothing there) is skipped; a group whose first sum (its
--   sessions) drops to 0 is deleted, found again by the row id the addition returned.
CREATE OR REPLACE FUNCTION add_rollup_rows(target text, keys text[], sums text[], source text, by_difference boolean)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  columns text := array_to_string(keys || sums, ', ');
BEGIN
  IF NOT by_difference THEN
    EXECUTE format('INSERT INTO %I (%s) %s', target, columns, source);
    RETURN;
  END IF;
  PERFORM free_temporary_tables('rollup_emptied');
  CREATE TEMPORARY TABLE rollup_emptied (row_id tid) ON COMMIT DROP;
  EXECUTE format('WITH added AS (INSERT INTO %1$I AS r (%2$s) SELECT %2$s FROM (%3$s) AS source WHERE %4$s'
      ' ON CONFLICT ON CONSTRAINT %5$I DO UPDATE SET %6$s RETURNING r.ctid AS row_id, r.%7$I AS first_sum)'
      ' INSERT INTO rollup_emptied SELECT row_id FROM added WHERE first_sum = 0',
    target, columns, source,
    (SELECT string_agg(format('%I <> 0', sum_column), ' OR ') FROM unnest(sums) AS sum_column),
    target || '_key',
    (SELECT string_agg(format('%1$I = r.%1$I + excluded.%1$I', sum_column), ', ') FROM unnest(sums) AS sum_column),
    sums[1]);
  EXECUTE format('DELETE FROM %I WHERE ctid = ANY (ARRAY(SELECT row_id FROM rollup_emptied))', target);
  PERFORM free_temporary_tables('rollup_emptied');
END;
$fn$;
