-- refresh_catalogue(next_xid, tracked): the discovery catalogue (src/db/schema/catalogue.ts) from
-- the events whose ingest_xid lies between its watermark derived_state('catalogue') and next_xid,
-- the snapshot xmin refresh_event_family (src/db/routines/refresh_event_family.sql) took first. Events never
-- change once stored, so a run adds what the new events carry: per event name its count and its
-- first and last time; per name and key (each column of contract A1 by its name, and each
-- flattened property as `properties.<key>`, set values only) the events that set it; per name,
-- key and value text the events carrying it. The first run (watermark 0) reads every event.
--
-- Values are tracked per (project, name, key) up to `tracked` of them: a value first seen when
-- that many are tracked is left out (and the key says so), while the tracked ones keep exact
-- counts. Discovery answers the 1,000 most frequent, so a property with at most `tracked`
-- distinct values per name is exact; ids and timestamps, which have more, are listed from the
-- values seen first. Values longer than 1,000 characters are not listed (an index row could not
-- hold them).
CREATE OR REPLACE FUNCTION refresh_catalogue(next_xid bigint, tracked integer DEFAULT 10000) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['catalogue_events', 'catalogue_values', 'catalogue_new'];
  from_xid bigint;
  -- The event columns of contract A1 that discovery lists, by name.
  catalogue_columns text[] := ARRAY['path', 'origin', 'referrer', 'referrer_name', 'referrer_type', 'country',
    'region', 'city', 'device', 'brand', 'model', 'browser', 'browser_version', 'os', 'os_version', 'utm_source',
    'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'profile_id', 'device_id', 'session_id', 'duration',
    'revenue'];
  -- Those with a value per session, device or visitor: millions at 10M events, counted apart.
  id_columns constant text[] := ARRAY['profile_id', 'device_id', 'session_id'];
  id_column text;
  -- The new events, as a FROM item.
  new_events text := 'catalogue_events';
  sort_setting text := current_setting('enable_sort');
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('refresh_catalogue'));
  INSERT INTO derived_state (name) VALUES ('catalogue') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'catalogue';
  IF from_xid >= next_xid THEN
    RETURN;
  END IF;
  IF from_xid = 0 THEN
    TRUNCATE event_name_catalogue, event_key_catalogue, event_value_catalogue;
  END IF;

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  IF from_xid = 0 THEN
    -- A first run reads every event where it lies: a copy of them all was the largest temporary
    -- table of a first build (393 MB at 1M events), as large as the events' heap.
    new_events := format('(SELECT * FROM events WHERE ingest_xid < %s)', next_xid);
  ELSE
    -- The new events, found once through the ingest_xid BRIN index, for the passes below.
    CREATE TEMPORARY TABLE catalogue_events ON COMMIT DROP AS
    SELECT * FROM events WHERE ingest_xid >= from_xid AND ingest_xid < next_xid;
    ANALYZE catalogue_events;
  END IF;

  EXECUTE format('INSERT INTO event_name_catalogue AS c (project_id, name, events, first_seen, last_seen)'
    ' SELECT project_id, name, count(*), min(created_at), max(created_at) FROM %s AS e GROUP BY project_id, name'
    ' ON CONFLICT (project_id, name) DO UPDATE SET events = c.events + excluded.events,'
    ' first_seen = least(c.first_seen, excluded.first_seen), last_seen = greatest(c.last_seen, excluded.last_seen)',
    new_events);

  -- Every set value of every event, as (name, key, value text), counted: the columns in one pass
  -- of hashed grouping sets (a set per column; in its rows the other columns are NULL, so the
  -- coalesce is the set's own value), the ids and the properties of the events that have any
  -- apart. Joined to a row per (event, column) and sorted, a first run over a million events took
  -- 42 s, spilling to disk; hashed this way, 4 s. Integers' text is one per value, so grouping by
  -- the column groups by its text. Sorts are off for this statement only: the planner, its groups estimated
  -- past work_mem, would sort each set (a hash aggregate spills to disk when it must); left off for
  -- the statements after it, they joined by nested loops instead of sorting (16 s instead of 4).
  PERFORM set_config('enable_sort', 'off', true);
  EXECUTE format('CREATE TEMPORARY TABLE catalogue_values ON COMMIT DROP AS'
      ' SELECT project_id, name, key, value, events FROM (SELECT project_id, name, CASE %s END AS key,'
      ' coalesce(%s) AS value, count(*) AS events FROM %s AS e GROUP BY GROUPING SETS (%s)) AS c'
      ' WHERE value <> %L',
    (SELECT string_agg(format('WHEN grouping(%1$I) = 0 THEN %1$L', c), ' ') FROM unnest(catalogue_columns) c
      WHERE c <> ALL (id_columns)),
    (SELECT string_agg(format('%I::text', c), ', ') FROM unnest(catalogue_columns) c WHERE c <> ALL (id_columns)),
    new_events,
    (SELECT string_agg(format('(project_id, name, %I)', c), ', ') FROM unnest(catalogue_columns) c
      WHERE c <> ALL (id_columns)),
    '');
  -- The ids one column at a time: in the pass above, their hash tables outgrew work_mem together
  -- and spilled 2.55 GB of files four times over in a 10M-event first build. Alone, each spills
  -- only what it holds, and its files are gone before the next begins (1M events with work_mem
  -- cut to a tenth, as 10M stands to 256 MB: 2.45 GB of files, the largest 1.07 GB, in 34 s;
  -- apart, 0.21 GB, the largest 0.12 GB, in 17 s; at 256 MB both take 19 s).
  FOREACH id_column IN ARRAY id_columns LOOP
    EXECUTE format('INSERT INTO catalogue_values SELECT project_id, name, %1$L, %1$I::text, count(*)'
      ' FROM %3$s AS e WHERE %1$I <> %2$L GROUP BY project_id, name, %1$I', id_column, '', new_events);
  END LOOP;
  PERFORM set_config('enable_sort', sort_setting, true);
  -- Empty or absent properties flatten to nothing; most events have none.
  EXECUTE format('INSERT INTO catalogue_values SELECT e.project_id, e.name, ''properties.'' || p.key, p.value, count(*)'
    ' FROM %s AS e CROSS JOIN LATERAL jsonb_each_text(flatten_properties(e.properties)) AS p'
    ' WHERE e.properties <> ''{}''::jsonb AND p.value <> '''' GROUP BY e.project_id, e.name, p.key, p.value', new_events);

  INSERT INTO event_key_catalogue AS k (project_id, name, key, events, tracked_values, values_left_out)
  SELECT project_id, name, key, sum(events), 0, false FROM catalogue_values GROUP BY project_id, name, key
  ON CONFLICT (project_id, name, key) DO UPDATE SET events = k.events + excluded.events;

  -- Tracked values add their new events.
  UPDATE event_value_catalogue v SET events = v.events + n.events
  FROM catalogue_values n
  WHERE v.project_id = n.project_id AND v.name = n.name AND v.key = n.key AND v.value = n.value;

  -- New values, the most frequent first, while the key has room. A key already full, that says so,
  -- has nothing to learn from its new values: the ids' keys fill within the first thousands of
  -- sessions, and then brought most of a run's values (103,000 of 111,000 at 1,000 events/s), each
  -- looked up and sorted here for nothing (0.9 s a run).
  CREATE TEMPORARY TABLE catalogue_new ON COMMIT DROP AS
  SELECT n.project_id, n.name, n.key, n.value, n.events,
    length(n.value) <= 1000 AND row_number() OVER (
      PARTITION BY n.project_id, n.name, n.key ORDER BY length(n.value) <= 1000 DESC, n.events DESC, n.value COLLATE "C"
    ) <= tracked - k.tracked_values AS kept
  FROM catalogue_values n
  JOIN event_key_catalogue k ON k.project_id = n.project_id AND k.name = n.name AND k.key = n.key
    AND NOT (k.tracked_values >= tracked AND k.values_left_out)
  WHERE NOT EXISTS (
    SELECT 1 FROM event_value_catalogue v
    WHERE v.project_id = n.project_id AND v.name = n.name AND v.key = n.key AND v.value = n.value
  );
  INSERT INTO event_value_catalogue (project_id, name, key, value, events)
  SELECT project_id, name, key, value, events FROM catalogue_new WHERE kept;
  UPDATE event_key_catalogue k
  SET tracked_values = k.tracked_values + a.kept, values_left_out = k.values_left_out OR a.left_out > 0
  FROM (
    SELECT project_id, name, key, count(*) FILTER (WHERE kept) AS kept, count(*) FILTER (WHERE NOT kept) AS left_out
    FROM catalogue_new GROUP BY project_id, name, key
  ) AS a
  WHERE k.project_id = a.project_id AND k.name = a.name AND k.key = a.key;

  UPDATE derived_state SET processed_xid = next_xid, last_run_at = now() WHERE name = 'catalogue';
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
