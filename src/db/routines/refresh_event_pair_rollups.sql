-- refresh_event_pair_rollups(from_xid, next_xid): the event aggregates per project, local day, event
-- name and pair of values of two chart columns (event_pair_rollups), which answer a chart filtered
-- on one column and split by another (src/queries/charts/rollups.ts). refresh_event_rollups
-- (src/db/routines/refresh_event_rollups.sql) calls it under its lock and watermark, once it has
-- copied the events between the two watermarks (every event on the first run) into the temporary
-- table `rollup_events`; both tables then hold exactly the events below next_xid.
--
-- A day is the project's own (its timezone, UTC when it has none), recorded per project in
-- event_pair_timezones. The new events are added into their rows (counts and sums add up, minimums
-- and maximums and the earliest instant keep the smaller or larger), so a run costs what its new
-- events cost. A project whose timezone is not the one its rows were built in has its rows built
-- again from all of its events below next_xid.
CREATE OR REPLACE FUNCTION refresh_event_pair_rollups(from_xid bigint, next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Hash aggregates, with room for those of a full build (as in refresh_event_rollups).
SET work_mem = '256MB'
SET enable_sort = off
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  -- The columns whose pairs are rolled up, the earlier one of a pair first: CHART_PAIR_COLUMNS in
  -- src/lib/dimensions.ts, held equal by test/node/routines.test.ts.
  pair_dimensions text[] := ARRAY['country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The columns of `rollup_events` or `events` (as `e`) the pairs read, with the zone `z`'s local day.
  columns text := $$e.project_id COLLATE "C" AS project_id, (e.created_at AT TIME ZONE z.timezone)::date AS day,
    e.created_at, e.name COLLATE "C" AS name, e.duration, e.revenue$$
    || (SELECT string_agg(format(', e.%1$I COLLATE "C" AS %1$I', d), '') FROM unnest(pair_dimensions) d);
BEGIN
  DROP TABLE IF EXISTS pg_temp.pair_event_zones, pg_temp.pair_events;
  -- Each project's zone, whether its rows are built whole in this run (all of them on the first),
  -- and whether it has no record yet: then no run has added any of its events, so its new ones are
  -- all it has.
  CREATE TEMPORARY TABLE pair_event_zones ON COMMIT DROP AS
  SELECT ids.project_id, coalesce(p.timezone, 'UTC') AS timezone,
    from_xid = 0 OR coalesce(t.timezone <> coalesce(p.timezone, 'UTC'), false) AS rebuilt,
    t.timezone IS NULL AS unrecorded
  FROM (SELECT id COLLATE "C" AS project_id FROM projects UNION SELECT project_id FROM rollup_events) AS ids
  LEFT JOIN projects p ON p.id = ids.project_id
  LEFT JOIN event_pair_timezones t ON t.project_id = ids.project_id;
  -- Without statistics the planner guessed many rebuilt projects and read every event to find theirs.
  ANALYZE pair_event_zones;

  -- The events to add: the new ones of the projects kept (on the first run every event, all
  -- rebuilt), then all of those of the projects rebuilt, read again from `events`.
  EXECUTE format('CREATE TEMPORARY TABLE pair_events ON COMMIT DROP AS SELECT %s FROM rollup_events e'
    ' JOIN pair_event_zones z ON z.project_id = e.project_id WHERE %s = 0 OR NOT z.rebuilt', columns, from_xid);
  IF from_xid = 0 THEN
    TRUNCATE event_pair_rollups;
  ELSIF EXISTS (SELECT 1 FROM pair_event_zones WHERE rebuilt) THEN
    DELETE FROM event_pair_rollups r USING pair_event_zones z WHERE r.project_id = z.project_id AND z.rebuilt;
    EXECUTE format('INSERT INTO pair_events SELECT %s FROM pair_event_zones z JOIN events e'
      ' ON e.project_id = z.project_id AND e.ingest_xid < %s WHERE z.rebuilt', columns, next_xid);
  END IF;
  ANALYZE pair_events;

  -- One hash aggregate per pair of columns; empty strings are "not set", like NULL. Each row is
  -- added into its group, or starts it.
  EXECUTE 'INSERT INTO event_pair_rollups AS r (project_id, day, name, dimension, value, by_dimension, by_value,'
      ' first_at, events, duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max) '
    || (SELECT string_agg(format('SELECT project_id, day, name, %L, nullif(%I, ''''), %L, nullif(%I, ''''),'
        ' min(created_at), count(*), sum(duration), min(duration), max(duration), sum(revenue), min(revenue), max(revenue)'
        ' FROM pair_events GROUP BY 1, 2, 3, 5, 7', a.d, a.d, b.d, b.d), ' UNION ALL ' ORDER BY a.i, b.i)
      FROM unnest(pair_dimensions) WITH ORDINALITY AS a(d, i) JOIN unnest(pair_dimensions) WITH ORDINALITY AS b(d, i) ON b.i > a.i)
    || ' ON CONFLICT ON CONSTRAINT event_pair_rollups_key DO UPDATE SET first_at = least(r.first_at, excluded.first_at),'
      ' events = r.events + excluded.events, duration_sum = r.duration_sum + excluded.duration_sum,'
      ' duration_min = least(r.duration_min, excluded.duration_min), duration_max = greatest(r.duration_max, excluded.duration_max),'
      ' revenue_sum = r.revenue_sum + excluded.revenue_sum, revenue_min = least(r.revenue_min, excluded.revenue_min),'
      ' revenue_max = greatest(r.revenue_max, excluded.revenue_max)';

  INSERT INTO event_pair_timezones AS t (project_id, timezone)
  SELECT project_id, timezone FROM pair_event_zones WHERE rebuilt OR unrecorded
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone;
  IF from_xid = 0 THEN
    ANALYZE event_pair_rollups;
  END IF;
END;
$fn$;
