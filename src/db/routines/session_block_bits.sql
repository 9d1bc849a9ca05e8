-- session_block_bits(): how many sessions of a day one block of the per-day bit strings covers
-- (session_day_bits, session_day_slices, page_day_bits, page_day_slices): session number n of a
-- day is bit n % size of block n / size. refresh_session_bits (src/db/routines/refresh_session_bits.sql)
-- writes the blocks and the queries (src/queries/insights/session-masks.ts) read them by it.
-- 8,192 bits are 1 KB: a block's string stays inline in its row, never compressed or moved out to
-- TOAST, and a refresh rewrites only the blocks of the sessions it touched, mostly a day's last.
-- The test database replaces it with a small size, so that its days span several blocks.
CREATE OR REPLACE FUNCTION session_block_bits() RETURNS integer
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT 8192
$fn$;
