-- session_dimensions(): the breakdown dimensions of sessions, in their order, each with the
-- dimension that prefixes its values where a value alone is ambiguous (a region's country, a
-- browser version's browser), NULL where none. The routines that build per-dimension rows read
-- the list here: refresh_rollups (src/db/routines/refresh_rollups.sql) and
-- refresh_dimension_sketches (src/db/routines/refresh_dimension_sketches.sql). BREAKDOWN_DIMENSIONS
-- and DIMENSION_PREFIXES in src/lib/dimensions.ts are the TypeScript side, and
-- test/node/routines.test.ts holds the two equal.
CREATE OR REPLACE FUNCTION session_dimensions() RETURNS TABLE (dimension text, prefix text)
LANGUAGE plpgsql
IMMUTABLE
AS $fn$
DECLARE
  dimensions text[] := ARRAY['referrer', 'referrer_name', 'referrer_type', 'country', 'region', 'city',
    'device', 'brand', 'model', 'browser', 'browser_version', 'os', 'os_version',
    'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];
  prefixes text[] := ARRAY[NULL, NULL, NULL, NULL, 'country', 'country',
    NULL, NULL, NULL, NULL, 'browser', NULL, 'os',
    NULL, NULL, NULL, NULL, NULL];
BEGIN
  RETURN QUERY SELECT * FROM unnest(dimensions, prefixes);
END;
$fn$;
