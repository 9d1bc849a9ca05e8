-- visitor_entry(profile_id): a visitor's entry in a HyperLogLog sketch of 2^15 registers, as one
-- integer: register << 6 | value. The visitor is hashed to 64 bits by hashtextextended, which every
-- Postgres has built in: the low 15 bits choose the register, and the lowest set bit of the other
-- 49 gives the value (1-49, 50 when none is set). A sketch keeps, per register, the largest value
-- any of its visitors has. insert_visitor_sketches (src/db/routines/insert_visitor_sketches.sql)
-- writes sketches from entries, and the sparse rows of visitor_dimension_sketches store them.
--
-- One expression, so the planner inlines it into the queries that call it: w & -w isolates the
-- lowest set bit of w, a power of two whose log2 is exact after rounding; ln(NULL) for w = 0 gives
-- the value 50 through coalesce.
CREATE OR REPLACE FUNCTION visitor_entry(profile_id text) RETURNS integer
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT ((hashtextextended(profile_id, 0) & 32767)::integer << 6)
    | coalesce(round(ln(nullif(
        ((hashtextextended(profile_id, 0) >> 15) & 562949953421311)
        & -((hashtextextended(profile_id, 0) >> 15) & 562949953421311), 0)::float8) / ln(2.0))::integer + 1, 50)
$fn$;
