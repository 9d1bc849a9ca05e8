-- refresh_event_rollups(next_xid): the hourly event rollups (event_rollups) that /export/charts
-- reads, per project, hour and event name ('' dimension) and per value of each breakdown column;
-- it has refresh_event_pair_rollups add the same events into the rows per local day and pair of
-- values (event_pair_rollups), which answer a chart filtered on one column and split by another.
-- refresh_event_family (src/db/routines/refresh_event_family.sql) calls it with the snapshot xmin
-- it took first, beside the session family (at once on another connection, or before it in
-- refresh_derived()); the seed's loader also calls it on a connection of its own, beside
-- refresh_derived().
--
-- Unlike sessions, the event rollups have an exact watermark: an hour's rows hold exactly the
-- events of that hour whose ingest_xid is below derived_state('event_rollups'). Every transaction
-- below it had finished when the run began (it is the run's snapshot xmin), so no event can join
-- that set later; a chart adds the events at or above it straight from `events` and is exact at
-- any moment (src/queries/charts/rollups.ts). The first run (watermark 0) builds every hour.
-- Events never change once stored, so a later run aggregates only the events between the two
-- watermarks and adds them into the rows: counts and sums add up, minimums and maximums keep the
-- smaller and the larger. (Recomputing the hours the new events fell in, as this did before,
-- re-read the whole current hour each minute: 5.4 s a run at 1,000 events/s, growing within it.)
CREATE OR REPLACE FUNCTION refresh_event_rollups(next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Hash aggregates, with room for those of a full build: the planner cannot estimate how few
-- (project, hour, name, value) groups there are and would otherwise sort every event per dimension.
SET work_mem = '256MB'
SET enable_sort = off
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['rollup_events'];
  from_xid bigint;
  source text;
  -- The breakdown columns rolled up: CHART_ROLLUP_COLUMNS in src/lib/dimensions.ts lists the
  -- same, and test/node/routines.test.ts holds them equal.
  dimensions text[] := ARRAY['path', 'country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The events' columns with their UTC hour (and the instant, visitor and session, for the day
  -- rows' local days and distinct counts; the properties, for the event strings' property values);
  -- byte-order ("C") keys hash and compare fastest.
  columns text := $$e.project_id COLLATE "C" AS project_id, e.name COLLATE "C" AS name, e.created_at,
    date_bin('1 hour', e.created_at, timestamptz '2000-01-01 00:00:00+00') AS hour, e.duration, e.revenue,
    e.profile_id, e.session_id, e.properties$$
    || (SELECT string_agg(format(', e.%1$I COLLATE "C" AS %1$I', d), '') FROM unnest(dimensions) d);
  aggregates text := 'count(*), sum(duration), min(duration), max(duration), sum(revenue), min(revenue), max(revenue)';
BEGIN
  -- One build at a time, also when a loader calls this beside refresh_derived(): a caller that
  -- waited here reads the watermark the other one committed and finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_event_rollups'));
  INSERT INTO derived_state (name) VALUES ('event_rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'event_rollups';
  IF from_xid >= next_xid THEN
    RETURN;
  END IF;

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- The events between the two watermarks (found through the ingest_xid BRIN index), or every event
  -- on the first run, copied narrow once: the aggregates below and the pairs' each read them.
  IF from_xid = 0 THEN
    TRUNCATE event_rollups;
  END IF;
  EXECUTE format('CREATE TEMPORARY TABLE rollup_events ON COMMIT DROP AS SELECT %s FROM events e'
    ' WHERE e.ingest_xid >= %s AND e.ingest_xid < %s', columns, from_xid, next_xid);
  ANALYZE rollup_events;
  source := 'rollup_events';

  -- Per hour and event name ('' dimension), and per value of each breakdown column. One hash
  -- aggregate per dimension: grouping sets sort the events once per set, several times slower.
  -- Empty strings are "not set", like NULL (the charts' breakdown rule). Each row is added into
  -- its group, or starts it.
  EXECUTE format('INSERT INTO event_rollups AS r (project_id, hour, name, dimension, value, events,'
      ' duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max)'
      ' SELECT project_id, hour, name, '''', NULL, %s FROM %s GROUP BY 1, 2, 3', aggregates, source)
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, hour, name, %L, nullif(%I, ''''), %s FROM %s GROUP BY 1, 2, 3, 5',
      d, d, aggregates, source), '') FROM unnest(dimensions) d)
    || ' ON CONFLICT ON CONSTRAINT event_rollups_key DO UPDATE SET events = r.events + excluded.events,'
      ' duration_sum = r.duration_sum + excluded.duration_sum, duration_min = least(r.duration_min, excluded.duration_min),'
      ' duration_max = greatest(r.duration_max, excluded.duration_max), revenue_sum = r.revenue_sum + excluded.revenue_sum,'
      ' revenue_min = least(r.revenue_min, excluded.revenue_min), revenue_max = greatest(r.revenue_max, excluded.revenue_max)';

  -- The same events per local day, event name and pair of values (src/db/routines/
  -- refresh_event_pair_rollups.sql), under the same watermark.
  PERFORM refresh_event_pair_rollups(from_xid, next_xid);

  IF from_xid = 0 THEN
    ANALYZE event_rollups;
  END IF;
  UPDATE derived_state SET processed_xid = next_xid, last_run_at = now() WHERE name = 'event_rollups';
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
