-- restore_indexes(statements): makes again the indexes set_aside_indexes
-- (src/db/routines/set_aside_indexes.sql) dropped, from the statements it returned, once a full
-- build has written the table. Each index is built by one sort of the table's rows; the
-- maintenance memory lets the pair rollups' key at 10M events (about 1.5 GB of rows) sort in few
-- passes.
CREATE OR REPLACE FUNCTION restore_indexes(statements text[]) RETURNS void
LANGUAGE plpgsql
SET maintenance_work_mem = '256MB'
AS $fn$
DECLARE
  statement text;
BEGIN
  FOREACH statement IN ARRAY statements LOOP
    EXECUTE statement;
  END LOOP;
END;
$fn$;
