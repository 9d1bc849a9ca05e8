-- insert_visitor_sketches(target, keys, source): HyperLogLog sketches of visitors, one per
-- (project_id, key values), written into the table `target` as planes (entry_planes,
-- src/db/routines/entry_planes.sql). `source` is a query whose rows have the columns project_id,
-- the `keys` and `entry`, a visitor's register entry (visitor_entry, src/db/routines/visitor_entry.sql);
-- `keys` names the columns that, with project_id, identify a sketch in `target` (`hour` or `day`).
-- A sketch already there is merged with the new one by union (the bit_or of each plane), which is
-- the sketch of both sets of visitors: a visitor it counts already changes nothing. A caller that
-- rebuilds sketches deletes them first.
--
-- Its caller: refresh_visitor_sketches (src/db/routines/refresh_visitor_sketches.sql), for the
-- hourly `visitor_sketches` and the days of `visitor_day_sketches`. src/queries/insights/visitor-sketch.ts
-- estimates from them.
CREATE OR REPLACE FUNCTION insert_visitor_sketches(target text, keys text[], source text) RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  key_list text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) AS k);
  key_select text := (SELECT string_agg('v.' || quote_ident(k), ', ') FROM unnest(keys) AS k);
  group_keys text := (SELECT string_agg('g.' || quote_ident(k), ', ') FROM unnest(keys) AS k);
BEGIN
  EXECUTE format($sql$
  INSERT INTO %1$I AS target (project_id, %2$s, plane, registers)
  SELECT g.project_id, %5$s, p.plane, p.registers
  FROM (
    SELECT v.project_id COLLATE "C" AS project_id, %3$s, array_agg(v.entry) AS entries
    FROM (%4$s) AS v
    GROUP BY 1, %3$s
  ) AS g
  CROSS JOIN LATERAL entry_planes(g.entries) AS p
  ON CONFLICT (project_id, %2$s, plane) DO UPDATE SET registers = target.registers | excluded.registers
  $sql$, target, key_list, key_select, source, group_keys);
END;
$fn$;
