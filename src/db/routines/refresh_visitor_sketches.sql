-- refresh_visitor_sketches(target, unit, unit_of_session, source): HyperLogLog sketches of the
-- visitors of some units of time (hours or days), written into the table `target`, whose unit
-- column is named `unit`. `source` is the FROM clause that yields the sessions (alias `s`) of those
-- units and `unit_of_session` the expression of a session's unit. It only inserts: the caller
-- deletes the units it rebuilds first. Two callers: refresh_rollups
-- (src/db/routines/refresh_rollups.sql) for the hourly `visitor_sketches`, and
-- refresh_day_sketches (src/db/routines/refresh_day_sketches.sql) for the days of
-- `visitor_day_sketches` that cannot be merged from hours. src/queries/insights/visitor-sketch.ts
-- estimates from them.
--
-- A visitor (profile_id) is hashed to 64 bits by hashtextextended, which every Postgres has built
-- in: the low 15 bits choose one of 2^15 registers, and the lowest set bit of the other 49 gives
-- the register's value (1-49, 50 when none is set). A sketch is stored as planes: plane k is a
-- bit(32768) with the bits of the registers whose value is at least k, so the union of two
-- sketches is the bit_or of their planes. Each plane is written as hex, 64 registers per 16
-- digits, the empty chunks between them padded in by lpad; the cast to bit(32768) pads the tail
-- with zeros.
CREATE OR REPLACE FUNCTION refresh_visitor_sketches(target text, unit text, unit_of_session text, source text) RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  EXECUTE format($sql$
  INSERT INTO %1$I (project_id, %2$I, plane, registers)
  SELECT project_id, unit, plane,
    ('x' || string_agg(lpad(to_hex(bits), (chunk - coalesce(previous_chunk, -1)) * 16, '0'), '' ORDER BY chunk))::varbit::bit(32768)
  FROM (
    SELECT project_id, unit, plane, chunk, bits,
      lag(chunk) OVER (PARTITION BY project_id, unit, plane ORDER BY chunk) AS previous_chunk
    FROM (
      SELECT project_id, unit, plane, register >> 6 AS chunk, bit_or(1::bigint << (63 - (register & 63))) AS bits
      FROM (
        SELECT project_id, unit, (h & 32767)::integer AS register,
          -- w & -w isolates the lowest set bit, a power of two: its log2 is exact after rounding.
          max(CASE WHEN w = 0 THEN 50 ELSE round(ln((w & -w)::float8) / ln(2.0))::integer + 1 END) AS value
        FROM (
          SELECT project_id, unit, h, (h >> 15) & 562949953421311 AS w
          FROM (
            SELECT s.project_id COLLATE "C" AS project_id, %3$s AS unit, hashtextextended(s.profile_id, 0) AS h
            FROM %4$s
          ) visitors
        ) hashed
        GROUP BY 1, 2, 3
      ) registers, generate_series(1, value) AS plane
      GROUP BY 1, 2, 3, 4
    ) plane_chunks
  ) ordered_chunks
  GROUP BY 1, 2, 3
  $sql$, target, unit, unit_of_session, source);
END;
$fn$;
