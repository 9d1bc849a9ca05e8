-- property_dimension(path): the dimension of the bit strings per day under which a session or an
-- event is for each value it holds at a property path (src/db/routines/refresh_session_bits.sql,
-- refresh_event_bits.sql): `property:` and the path as a JSON array, `property:["plan"]`. The
-- queries name it the same way (propertyStringDimension, src/lib/dimensions.ts); JSON.stringify
-- and array_to_json escape a key alike.
CREATE OR REPLACE FUNCTION property_dimension(path text[]) RETURNS text
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT 'property:' || array_to_json(path)::text
$fn$;
