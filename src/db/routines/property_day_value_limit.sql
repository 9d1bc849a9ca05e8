-- property_day_value_limit(): the most values a property path may hold in a project day and keep
-- its strings there (property_day_paths, src/db/schema/session-bits.ts; written by
-- refresh_session_bits, src/db/routines/refresh_session_bits.sql). Each string of a run's block is
-- written again every run, so a path with a value per session (an order id) must not have strings:
-- a filter on it, on a day past the bound, reads the sessions' property values instead
-- (src/queries/insights/model.ts). The tests read it here.
CREATE OR REPLACE FUNCTION property_day_value_limit() RETURNS integer
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT 32
$fn$;
