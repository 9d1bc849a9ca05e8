-- insert_visitor_sketches(target, keys, source, merge): HyperLogLog sketches of the visitors of
-- `source`, one per (project_id, key values), written into the table `target`. `source` is a query
-- whose rows are sessions with the columns project_id, the `keys` and profile_id; `keys` names the
-- columns that, with project_id, identify a sketch in `target` (`hour`, `day`, or `day, dimension,
-- name`). Without `merge` it only inserts: the caller deletes the sketches it rebuilds first. With
-- `merge` a sketch that exists is replaced by its union with the new one (bit_or of their planes),
-- which adds the new visitors and changes nothing for those it holds already; `target` then needs
-- a unique index on (project_id, keys…, plane).
--
-- Its callers: refresh_rollups (src/db/routines/refresh_rollups.sql) for the hourly
-- `visitor_sketches`, refresh_day_sketches (src/db/routines/refresh_day_sketches.sql) for the days
-- of `visitor_day_sketches` that cannot be merged from hours, and refresh_dimension_sketches
-- (src/db/routines/refresh_dimension_sketches.sql) for `visitor_dimension_sketches`.
-- src/queries/insights/visitor-sketch.ts estimates from them.
--
-- A visitor (profile_id) is hashed to 64 bits by hashtextextended, which every Postgres has built
-- in: the low 15 bits choose one of 2^15 registers, and the lowest set bit of the other 49 gives
-- the register's value (1-49, 50 when none is set). A sketch is stored as planes: plane k is a
-- bit(32768) with the bits of the registers whose value is at least k, so the union of two
-- sketches is the bit_or of their planes. Each plane is written as hex, 64 registers per 16
-- digits, the empty chunks between them padded in by lpad; the cast to bit(32768) pads the tail
-- with zeros.
CREATE OR REPLACE FUNCTION insert_visitor_sketches(target text, keys text[], source text, merge boolean) RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  key_list text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) AS k);
  key_select text := (SELECT string_agg('v.' || quote_ident(k), ', ') FROM unnest(keys) AS k);
BEGIN
  EXECUTE format($sql$
  INSERT INTO %1$I AS t (project_id, %2$s, plane, registers)
  SELECT project_id, %2$s, plane,
    ('x' || string_agg(lpad(to_hex(bits), (chunk - coalesce(previous_chunk, -1)) * 16, '0'), '' ORDER BY chunk))::varbit::bit(32768)
  FROM (
    SELECT project_id, %2$s, plane, chunk, bits,
      lag(chunk) OVER (PARTITION BY project_id, %2$s, plane ORDER BY chunk) AS previous_chunk
    FROM (
      SELECT project_id, %2$s, plane, register >> 6 AS chunk, bit_or(1::bigint << (63 - (register & 63))) AS bits
      FROM (
        SELECT project_id, %2$s, (h & 32767)::integer AS register,
          -- w & -w isolates the lowest set bit, a power of two: its log2 is exact after rounding.
          max(CASE WHEN w = 0 THEN 50 ELSE round(ln((w & -w)::float8) / ln(2.0))::integer + 1 END) AS value
        FROM (
          SELECT project_id, %2$s, h, (h >> 15) & 562949953421311 AS w
          FROM (
            SELECT v.project_id COLLATE "C" AS project_id, %3$s, hashtextextended(v.profile_id, 0) AS h
            FROM (%4$s) AS v
          ) visitors
        ) hashed
        GROUP BY project_id, %2$s, register
      ) registers, generate_series(1, value) AS plane
      GROUP BY project_id, %2$s, plane, chunk
    ) plane_chunks
  ) ordered_chunks
  GROUP BY project_id, %2$s, plane
  %5$s
  $sql$, target, key_list, key_select, source,
    CASE WHEN merge THEN format('ON CONFLICT (project_id, %s, plane) DO UPDATE SET registers = t.registers | excluded.registers', key_list) ELSE '' END);
END;
$fn$;
