-- refresh_day_sketches(): the day rows of the rollups (visitor_day_sketches, session_day_rollups,
-- page_day_rollups) of the (project_id, day) rows of the temporary table `rollup_days`, whose days
-- are local midnights in its `timezone`. refresh_session_rollups
-- (src/db/routines/refresh_session_rollups.sql) fills that table after the hours are rebuilt,
-- calls this, and only then records each project's timezone in rollup_timezones. A project whose
-- recorded timezone differs from its own has been re-zoned: its old session and page day rows are
-- deleted here (its old sketches by the caller), and `rollup_days` holds all of its days.
--
-- A day whose local midnights are whole UTC hours (every day of a zone with a whole-hour offset)
-- is built from its hours, which refresh_rollups (src/db/routines/refresh_rollups.sql) has just
-- written: its session and page rows are sums of the hourly rows, and its visitor sketch is the
-- union of the hours' sketches, the bit_or of their planes, so no session is hashed again. Days
-- of half-hour zones have no session or page day rows (the query layer reads day rows only for
-- whole-hour days) and their sketches are built from their sessions by refresh_visitor_sketches
-- (src/db/routines/refresh_visitor_sketches.sql).
CREATE OR REPLACE FUNCTION refresh_day_sketches() RETURNS void
LANGUAGE plpgsql
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
AS $fn$
BEGIN
  -- Projects whose timezone changed (the marker is updated after this): their old days go.
  DELETE FROM session_day_rollups r USING projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  WHERE r.project_id = p.id AND z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC');
  DELETE FROM page_day_rollups r USING projects p LEFT JOIN rollup_timezones z ON z.project_id = p.id
  WHERE r.project_id = p.id AND z.timezone IS DISTINCT FROM coalesce(p.timezone, 'UTC');

  DELETE FROM visitor_day_sketches r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;
  DELETE FROM session_day_rollups r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;
  DELETE FROM page_day_rollups r USING rollup_days d WHERE r.project_id = d.project_id AND r.day = d.day;

  -- The days whose two midnights, this one and the next, are whole UTC hours: built from their hours.
  -- The next midnight is that of the next local date, not the day's first instant plus a day: a day
  -- without a midnight (a spring change at 00:00, as in America/Santiago) starts at 01:00, and the
  -- day after it at 00:00 again, which adding a day to 01:00 would count in both days.
  CREATE TEMPORARY TABLE whole_hour_days ON COMMIT DROP AS
  SELECT project_id, day, ((day AT TIME ZONE timezone)::date + 1)::timestamp AT TIME ZONE timezone AS next_day
  FROM rollup_days;
  DELETE FROM whole_hour_days
  WHERE date_trunc('hour', day, 'UTC') <> day OR date_trunc('hour', next_day, 'UTC') <> next_day;
  ANALYZE whole_hour_days;

  INSERT INTO visitor_day_sketches (project_id, day, plane, registers)
  SELECT d.project_id, d.day, v.plane, bit_or(v.registers)
  FROM whole_hour_days d
  JOIN visitor_sketches v ON v.project_id = d.project_id AND v.hour >= d.day AND v.hour < d.next_day
  GROUP BY d.project_id, d.day, v.plane;

  -- The sketches of the other days, from their sessions.
  PERFORM refresh_visitor_sketches('visitor_day_sketches', 'day',
    $$date_trunc('day', s.started_at, d.timezone)$$,
    $$rollup_days d JOIN sessions s ON s.project_id = d.project_id AND s.started_at >= d.day
      AND s.started_at < ((d.day AT TIME ZONE d.timezone)::date + 1)::timestamp AT TIME ZONE d.timezone
      WHERE NOT EXISTS (SELECT 1 FROM whole_hour_days w WHERE w.project_id = d.project_id AND w.day = d.day)$$);

  INSERT INTO session_day_rollups (project_id, day, dimension, name, prefix, sessions, bounces, screen_views, duration_ms, timed_sessions, revenue)
  SELECT d.project_id, d.day, r.dimension, r.name, r.prefix, sum(r.sessions), sum(r.bounces), sum(r.screen_views),
    sum(r.duration_ms), sum(r.timed_sessions), sum(r.revenue)
  FROM whole_hour_days d
  JOIN session_rollups r ON r.project_id = d.project_id AND r.hour >= d.day AND r.hour < d.next_day
  GROUP BY d.project_id, d.day, r.dimension, r.name, r.prefix;

  INSERT INTO page_day_rollups (project_id, day, origin, path, title, sessions, pageviews, bounces, duration_ms, timed_views)
  SELECT d.project_id, d.day, r.origin, r.path, max(r.title), sum(r.sessions), sum(r.pageviews), sum(r.bounces),
    sum(r.duration_ms), sum(r.timed_views)
  FROM whole_hour_days d
  JOIN page_rollups r ON r.project_id = d.project_id AND r.hour >= d.day AND r.hour < d.next_day
  GROUP BY d.project_id, d.day, r.origin, r.path;

  DROP TABLE whole_hour_days;
END;
$fn$;
--> statement-breakpoint
-- refresh_event_rollups(next_xid): the hourly event rollups (event_rollups) that /export/charts
-- reads, per project, hour and event name ('' dimension) and per value of each breakdown column.
-- refresh_derived (src/db/routines/refresh_derived.sql) calls it in the same transaction as
-- refresh_session_rollups, with the snapshot xmin it took first; the seed's loader also calls it
-- on a connection of its own, beside refresh_derived().
--
-- Unlike sessions, the event rollups have an exact watermark: an hour's rows hold exactly the
-- events of that hour whose ingest_xid is below derived_state('event_rollups'). Every transaction
-- below it had finished when the run began (it is the run's snapshot xmin), so no event can join
-- that set later; a chart adds the events at or above it straight from `events` and is exact at
-- any moment (src/queries/charts/rollups.ts). The first run (watermark 0) builds every hour;
-- later runs delete and recompute the hours of the events that arrived since the last run.
CREATE OR REPLACE FUNCTION refresh_event_rollups(next_xid bigint) RETURNS void
LANGUAGE plpgsql
-- Hash aggregates, with room for those of a full build: the planner cannot estimate how few
-- (project, hour, name, value) groups there are and would otherwise sort every event per dimension.
SET work_mem = '256MB'
SET enable_sort = off
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  source text;
  -- The breakdown columns rolled up: CHART_ROLLUP_COLUMNS in src/lib/dimensions.ts lists the
  -- same, and test/node/routines.test.ts holds them equal.
  dimensions text[] := ARRAY['path', 'country', 'device', 'browser', 'os', 'referrer_name', 'referrer_type',
    'utm_source', 'utm_medium', 'utm_campaign'];
  -- The events' columns with their UTC hour; byte-order ("C") keys hash and compare fastest.
  columns text := $$e.project_id COLLATE "C" AS project_id, e.name COLLATE "C" AS name,
    date_bin('1 hour', e.created_at, timestamptz '2000-01-01 00:00:00+00') AS hour, e.duration, e.revenue$$
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

  DROP TABLE IF EXISTS pg_temp.event_hours, pg_temp.rollup_events;
  IF from_xid = 0 THEN
    TRUNCATE event_rollups;
    source := format('(SELECT %s FROM events e WHERE e.ingest_xid < %s) e', columns, next_xid);
  ELSE
    CREATE TEMPORARY TABLE event_hours ON COMMIT DROP AS
      SELECT DISTINCT project_id, date_trunc('hour', created_at, 'UTC') AS hour
      FROM events WHERE ingest_xid >= from_xid AND ingest_xid < next_xid;
    ANALYZE event_hours;
    DELETE FROM event_rollups r USING event_hours h WHERE r.project_id = h.project_id AND r.hour = h.hour;
    EXECUTE format('CREATE TEMPORARY TABLE rollup_events ON COMMIT DROP AS SELECT %s FROM event_hours h'
      ' JOIN events e ON e.project_id = h.project_id AND e.created_at >= h.hour'
      ' AND e.created_at < h.hour + interval ''1 hour'' WHERE e.ingest_xid < %s', columns, next_xid);
    source := 'rollup_events';
  END IF;

  -- Per hour and event name ('' dimension), and per value of each breakdown column. One hash
  -- aggregate per dimension: grouping sets sort the events once per set, several times slower.
  -- Empty strings are "not set", like NULL (the charts' breakdown rule).
  EXECUTE format('INSERT INTO event_rollups (project_id, hour, name, dimension, value, events,'
      ' duration_sum, duration_min, duration_max, revenue_sum, revenue_min, revenue_max)'
      ' SELECT project_id, hour, name, '''', NULL, %s FROM %s GROUP BY 1, 2, 3', aggregates, source)
    || (SELECT string_agg(format(' UNION ALL SELECT project_id, hour, name, %L, nullif(%I, ''''), %s FROM %s GROUP BY 1, 2, 3, 5',
      d, d, aggregates, source), '') FROM unnest(dimensions) d);

  UPDATE derived_state SET processed_xid = next_xid, last_run_at = now() WHERE name = 'event_rollups';
END;
$fn$;
--> statement-breakpoint
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
--> statement-breakpoint
-- Day rows built before this fix: the row of a day without a local midnight (one that starts at
-- 01:00) also summed the first hour of the next day. Forgetting the timezone such a project's days
-- were built in makes the next refresh_derived() rebuild all of its days; until then its hours answer.
DELETE FROM rollup_timezones z
WHERE EXISTS (
  SELECT 1 FROM visitor_day_sketches d
  WHERE d.project_id = z.project_id AND (d.day AT TIME ZONE z.timezone)::time <> time '00:00'
);
