-- ordinal_bits(ordinals, size): a bit string of `size` bits rounded up to whole bytes, with the
-- bit of each ordinal set (0 is the leftmost). The per-day bit strings of refresh_session_bits
-- (src/db/routines/refresh_session_bits.sql) are built with it. Postgres has no constructor for a
-- sparse bit string, and setting bits one at a time copies the string each time, so the string is
-- written as hexadecimal text, a byte per set byte and '00' for each empty byte between them, and
-- cast once.
CREATE OR REPLACE FUNCTION ordinal_bits(ordinals integer[], size integer) RETURNS bit varying
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT ('x' || coalesce(string_agg(repeat('00', gap) || lpad(to_hex(bits), 2, '0'), '' ORDER BY byte), '')
    || repeat('00', (size + 7) / 8 - coalesce(max(byte) + 1, 0)))::bit varying
  FROM (
    SELECT byte, bits, byte - coalesce(lag(byte) OVER (ORDER BY byte), -1) - 1 AS gap
    FROM (SELECT o / 8 AS byte, bit_or(1 << (7 - o % 8)) AS bits FROM unnest(ordinals) AS o GROUP BY 1) AS bytes
  ) AS cells
$fn$;
