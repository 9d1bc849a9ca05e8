-- property_day_path_limit(): the most property paths of a project day that have strings there
-- (property_day_paths, src/db/schema/session-bits.ts), the first ones the day meets, so that a
-- project whose events carry many keys (or long arrays, a path per position) keeps a bounded number
-- of strings a day (src/db/routines/property_day_value_limit.sql says why). The tests read it here.
CREATE OR REPLACE FUNCTION property_day_path_limit() RETURNS integer
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT 64
$fn$;
