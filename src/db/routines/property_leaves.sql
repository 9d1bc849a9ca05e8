-- property_leaves(properties, prefix): each leaf of an event's properties that `#>>` can print as
-- the value of a key path: a string (its text, "" included), a number (its JSON text) or a boolean
-- (`true`, `false`), with the path that reaches it, array elements by their position (0, 1, …) as
-- `#>>` reads them. JSON null prints nothing and is left out. The session properties
-- (src/db/routines/refresh_session_properties.sql) are these leaves of a session's events, and
-- property filters read them (src/queries/property-leaves.ts keeps the same limits): a leaf with a
-- value over 256 bytes, a path of more than 16 keys or keys over 256 bytes in all is not kept, so
-- that every row fits its index.
--
-- What `#>>` prints at a path that the leaves do not hold as text (an object or an array, printed
-- as its JSON; a value over 256 bytes) is marked by a row of that path whose value is NULL: a
-- filter whose values such a text could pass (`contains`, `regex`, …) reads the events of the
-- sessions so marked, and only theirs, for the exact answer.
--
-- PL/pgSQL that recurses only into nested values, as flatten_properties does (a recursive CTE in a
-- SQL function is planned again for every row).
CREATE OR REPLACE FUNCTION property_leaves(properties jsonb, prefix text[] DEFAULT '{}')
RETURNS TABLE (path text[], value text)
LANGUAGE plpgsql
IMMUTABLE
PARALLEL SAFE
AS $fn$
DECLARE
  item record;
BEGIN
  IF cardinality(prefix) >= 16 OR jsonb_typeof(properties) NOT IN ('object', 'array') THEN
    RETURN;
  END IF;
  FOR item IN
    SELECT e.key AS child_key, e.value AS child, jsonb_typeof(e.value) AS kind
    FROM jsonb_each(CASE jsonb_typeof(properties) WHEN 'object' THEN properties ELSE '{}'::jsonb END) AS e
    UNION ALL
    SELECT (a.position - 1)::text, a.element, jsonb_typeof(a.element)
    FROM jsonb_array_elements(CASE jsonb_typeof(properties) WHEN 'array' THEN properties ELSE '[]'::jsonb END)
      WITH ORDINALITY AS a(element, position)
  LOOP
    path := prefix || item.child_key;
    IF item.kind IN ('string', 'number', 'boolean') THEN
      value := item.child #>> '{}';
      IF octet_length(array_to_string(path, '')) <= 256 THEN
        IF octet_length(value) > 256 THEN
          value := NULL;
        END IF;
        RETURN NEXT;
      END IF;
    ELSIF item.kind IN ('object', 'array') THEN
      IF octet_length(array_to_string(path, '')) <= 256 THEN
        value := NULL;
        RETURN NEXT;
      END IF;
      RETURN QUERY SELECT l.path, l.value FROM property_leaves(item.child, path) AS l;
    END IF;
  END LOOP;
END;
$fn$;
