-- write_day_strings(target, keys, source, merging): writes the bit strings over day ordinals of the
-- groups `source` selects into `target` (session_day_bits, session_day_slices, page_day_bits,
-- page_day_slices), whose columns are project_id, day, `keys` and the string `sessions`.
-- refresh_session_bits (src/db/routines/refresh_session_bits.sql) calls it once per table, with
-- its temporary table `bit_days`: per project day written, `size` (the bits of its strings: one
-- past the last number given in the day, rounded up to whole bytes) and `cleared` (the numbers
-- whose bits this run sets anew, as a string of that size).
--
-- `source` selects project_id, day, `keys` and `ordinals`: the numbers whose bit is set in the
-- group's string. Not `merging` (a build, into days with no string), they are inserted. `merging`,
-- each stored string of a written day is resized to the day's size with the `cleared` bits off and
-- ORed with its group's new bits; a string left without a set bit is not kept.
CREATE OR REPLACE FUNCTION write_day_strings(target text, keys text[], source text, merging boolean)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  key_list text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) AS k);
  source_keys text := (SELECT string_agg('g.' || quote_ident(k), ', ') FROM unnest(keys) AS k);
  stored_keys text := (SELECT string_agg('b.' || quote_ident(k), ', ') FROM unnest(keys) AS k);
  width constant text := '((d.size + 7) / 8 * 8)';
  written text := format('SELECT g.project_id, g.day, %s, ordinal_bits(g.ordinals, d.size) AS sessions'
    ' FROM (%s) AS g JOIN bit_days d ON d.project_id = g.project_id AND d.day = g.day', source_keys, source);
BEGIN
  IF NOT merging THEN
    EXECUTE format('INSERT INTO %I (project_id, day, %s, sessions) %s', target, key_list, written);
    RETURN;
  END IF;
  -- The day's strings are taken out and written back in one statement: a day holds a few hundred.
  EXECUTE format('WITH kept AS (DELETE FROM %1$I b USING bit_days d WHERE b.project_id = d.project_id AND b.day = d.day'
      ' RETURNING b.project_id, b.day, %2$s, (CASE WHEN length(b.sessions) >= %3$s THEN substring(b.sessions FROM 1 FOR %3$s)'
      ' ELSE b.sessions || repeat(''0'', %3$s - length(b.sessions))::bit varying END) & ~d.cleared AS sessions)'
      ' INSERT INTO %1$I (project_id, day, %4$s, sessions)'
      ' SELECT project_id, day, %4$s, bit_or(sessions) FROM (SELECT * FROM kept UNION ALL %5$s) AS merged'
      ' GROUP BY project_id, day, %4$s HAVING bit_count(bit_or(sessions)) > 0',
    target, stored_keys, width, key_list, written);
END;
$fn$;
