-- flatten_properties(properties): an event's properties as one flat JSON object of text values
-- (contract A1): nested objects and arrays become dotted keys (`a.b`, `items.0.sku`), each leaf
-- that is set (neither JSON null nor "") maps to its text: a string itself, a number's JSON text,
-- `true`/`false`. Listings show properties this way, and discovery counts keys and values by it.
CREATE OR REPLACE FUNCTION flatten_properties(properties jsonb) RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  WITH RECURSIVE walk(key, value) AS (
    SELECT top.key, top.value
    FROM jsonb_each(CASE WHEN jsonb_typeof(properties) = 'object' THEN properties ELSE '{}'::jsonb END) AS top
    UNION ALL
    SELECT walk.key || '.' || child.key, child.value
    FROM walk
    CROSS JOIN LATERAL (
      SELECT member.key, member.value
      FROM jsonb_each(CASE WHEN jsonb_typeof(walk.value) = 'object' THEN walk.value ELSE '{}'::jsonb END) AS member
      UNION ALL
      SELECT (item.position - 1)::text, item.value
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(walk.value) = 'array' THEN walk.value ELSE '[]'::jsonb END)
        WITH ORDINALITY AS item(value, position)
    ) AS child
  )
  SELECT coalesce(
    jsonb_object_agg(key, CASE jsonb_typeof(value) WHEN 'string' THEN value #>> '{}' ELSE value::text END),
    '{}'::jsonb
  )
  FROM walk
  WHERE jsonb_typeof(value) IN ('string', 'number', 'boolean') AND value <> '""'::jsonb
$fn$;
