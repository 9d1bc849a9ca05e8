-- day_block_bits(): how many session numbers of a day one block of its strings covers. The
-- strings per project day over its sessions (session_day_bits, session_day_slices, page_day_bits,
-- page_day_slices; src/db/routines/refresh_session_bits.sql) are cut into blocks: block k holds
-- the bits of the day's numbers k × day_block_bits() to (k + 1) × day_block_bits() - 1, so a
-- refresh rewrites only the blocks of the sessions it touched (the newest and those still
-- running), not strings that grow with the day. 524,288 bits (64 KB) keeps a day of up to 524,288
-- sessions in one block, as every day was before blocks: the days of 30 million events over 30
-- days hold about 300,000, and the filtered reads of a day cut into five smaller blocks took about
-- twice as long (docs/design/filtered-dashboards.md). At a sustained 1,000 events a second a day
-- holds about 26 million sessions, 50 blocks, while the sessions still running (the last half
-- hour's) lie in the last one or two: a run rewrites those, not 3 MB strings. The queries that need
-- it read it here (src/queries/insights/combined-visitors.ts); a test database may replace it with
-- a small number to put a few sessions in many blocks.
CREATE OR REPLACE FUNCTION day_block_bits() RETURNS integer
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT 524288
$fn$;
