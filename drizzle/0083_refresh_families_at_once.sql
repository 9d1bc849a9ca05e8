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
--> statement-breakpoint
-- refresh_derived(): folds the events committed since the last run into every derived table, in
-- one transaction, and returns the number of sessions it recomputed. It is the entry point its
-- callers use on one connection (the seed, the tests, pipelines; the Worker's cron trigger runs its
-- two families at once instead, src/queries/derived.ts): incremental, idempotent, and safe to call
-- at any time and concurrently. It runs the two families in turn, each waiting for a run of it
-- under way:
-- - refresh_session_family (src/db/routines/refresh_session_family.sql): sessions, their rollups,
--   pairs, strings and sketches, and the profile summaries;
-- - refresh_event_family (src/db/routines/refresh_event_family.sql): the charts' event rollups,
--   the discovery catalogue and the profiles' activity.
CREATE OR REPLACE FUNCTION refresh_derived() RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  touched integer;
BEGIN
  -- Takes the one-run-at-a-time lock (hashtext('refresh_derived')), held until commit.
  touched := refresh_session_family(true);
  PERFORM refresh_event_family(true);
  RETURN touched;
END;
$fn$;
--> statement-breakpoint
-- refresh_event_family(wait): the event family of refresh_derived (src/db/routines/refresh_derived.sql)
-- in one transaction, every part up to the snapshot xmin taken here first, their exact watermark:
-- - refresh_event_rollups (src/db/routines/refresh_event_rollups.sql): the hourly event rollups and
--   the event pairs per day of the charts;
-- - refresh_catalogue (src/db/routines/refresh_catalogue.sql): the discovery catalogue of event
--   names, keys and values;
-- - refresh_profile_activity (src/db/routines/refresh_profile_activity.sql): each profile's local
--   days and the active-user and retention aggregates.
-- It reads and writes none of the session family's tables (src/db/routines/refresh_session_family.sql),
-- so the two can run at once on two connections, as the cron trigger runs them (src/queries/derived.ts;
-- at 1,000 events/s a run then takes a fifth to a quarter less time, docs/design/billion-events.md).
-- Returns true once it ran. With `wait` it waits for a run under
-- way; without, it returns NULL at once, folding nothing, while another run holds the event
-- rollups' lock.
CREATE OR REPLACE FUNCTION refresh_event_family(wait boolean) RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
BEGIN
  -- The lock refresh_event_rollups takes: held by this transaction from here.
  IF NOT wait AND NOT pg_try_advisory_xact_lock(hashtext('refresh_event_rollups')) THEN
    RETURN NULL;
  END IF;
  PERFORM refresh_event_rollups(next_xid);
  PERFORM refresh_catalogue(next_xid);
  PERFORM refresh_profile_activity(next_xid);
  RETURN true;
END;
$fn$;
--> statement-breakpoint
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
  -- rows' local days and distinct counts); byte-order ("C") keys hash and compare fastest.
  columns text := $$e.project_id COLLATE "C" AS project_id, e.name COLLATE "C" AS name, e.created_at,
    date_bin('1 hour', e.created_at, timestamptz '2000-01-01 00:00:00+00') AS hour, e.duration, e.revenue,
    e.profile_id, e.session_id$$
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
--> statement-breakpoint
-- refresh_profile_activity(next_xid): the per-profile local days and their aggregates
-- (profile_days, active_user_days, retention_weeks; src/db/schema/profile-activity.ts) from the
-- events whose ingest_xid lies between its watermark derived_state('activity') and next_xid, the
-- snapshot xmin refresh_event_family (src/db/routines/refresh_event_family.sql) took first.
--
-- The new events are counted per (project, profile, local day of the project's timezone) and
-- added to profile_days. The aggregates depend on each profile's whole sequence of days (the gap
-- to its previous active day, its cohort, its next active week), so for every profile the run
-- touched its contribution is computed from profile_days before the merge and subtracted, and
-- computed again after it and added: exact under late events, whatever order they arrive in.
-- The first run (watermark 0) reads every event; a project whose timezone is no longer the one
-- recorded in activity_timezones has its rows rebuilt from all its events.
CREATE OR REPLACE FUNCTION refresh_profile_activity(next_xid bigint) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['activity_zones', 'activity_delta', 'activity_profiles', 'user_day_changes',
    'retention_week_changes'];
  from_xid bigint;
  sign integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('refresh_profile_activity'));
  INSERT INTO derived_state (name) VALUES ('activity') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'activity';
  IF from_xid >= next_xid THEN
    RETURN;
  END IF;

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Each project's zone, and whether its rows are rebuilt whole (every project on the first run).
  CREATE TEMPORARY TABLE activity_zones ON COMMIT DROP AS
  SELECT p.id AS project_id, coalesce(p.timezone, 'UTC') AS timezone,
    from_xid = 0 OR (z.timezone IS NOT NULL AND z.timezone <> coalesce(p.timezone, 'UTC')) AS rebuilt
  FROM projects p LEFT JOIN activity_timezones z ON z.project_id = p.id;
  IF from_xid = 0 THEN
    TRUNCATE profile_days, active_user_days, retention_weeks;
  ELSE
    EXECUTE 'DELETE FROM profile_days d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
    EXECUTE 'DELETE FROM active_user_days d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
    EXECUTE 'DELETE FROM retention_weeks d USING activity_zones z WHERE d.project_id = z.project_id AND z.rebuilt AND '
      || rebuilt_projects_only('activity_zones', 'd');
  END IF;

  -- The new events per profile and local day: through the ingest_xid BRIN index, or every event of
  -- a rebuilt project.
  CREATE TEMPORARY TABLE activity_delta (project_id text, profile_id text, day date, events integer,
    identified_events integer) ON COMMIT DROP;
  IF from_xid > 0 THEN
    INSERT INTO activity_delta
    SELECT e.project_id, e.profile_id, (e.created_at AT TIME ZONE z.timezone)::date,
      count(*)::integer, (count(*) FILTER (WHERE e.profile_id <> e.device_id))::integer
    FROM events e JOIN activity_zones z ON z.project_id = e.project_id AND NOT z.rebuilt
    WHERE e.ingest_xid >= from_xid AND e.ingest_xid < next_xid
    GROUP BY 1, 2, 3;
  END IF;
  IF EXISTS (SELECT 1 FROM activity_zones WHERE rebuilt) THEN
    EXECUTE format('INSERT INTO activity_delta SELECT e.project_id, e.profile_id, (e.created_at AT TIME ZONE z.timezone)::date,'
      ' count(*)::integer, (count(*) FILTER (WHERE e.profile_id <> e.device_id))::integer'
      ' FROM activity_zones z JOIN events e ON e.project_id = z.project_id'
      ' WHERE z.rebuilt AND e.ingest_xid < %s AND %s GROUP BY 1, 2, 3', next_xid, rebuilt_projects_only('activity_zones', 'e'));
  END IF;
  -- The profiles whose aggregates can change: those with a day new to profile_days, or a day
  -- whose first identified event this is. The aggregates read only which days a profile has and
  -- which of them are identified, so the others' contributions stay as they are: a profile whose
  -- run only added events to days it had is not read again, whatever its history of days.
  CREATE TEMPORARY TABLE activity_profiles ON COMMIT DROP AS
  SELECT DISTINCT a.project_id, a.profile_id FROM activity_delta a
  WHERE NOT EXISTS (SELECT 1 FROM profile_days d WHERE d.project_id = a.project_id AND d.profile_id = a.profile_id
    AND d.day = a.day AND (d.identified_events > 0 OR a.identified_events = 0));
  ANALYZE activity_delta, activity_profiles;

  CREATE TEMPORARY TABLE user_day_changes (project_id text, day date, identified boolean, gap smallint,
    last boolean, users integer) ON COMMIT DROP;
  CREATE TEMPORARY TABLE retention_week_changes (project_id text, cohort date, week date, next_week date,
    users integer) ON COMMIT DROP;
  FOREACH sign IN ARRAY ARRAY[-1, 1] LOOP
    IF sign = 1 THEN
      INSERT INTO profile_days AS d (project_id, profile_id, day, events, identified_events)
      SELECT project_id, profile_id, day, events, identified_events FROM activity_delta
      ON CONFLICT (project_id, profile_id, day) DO UPDATE SET
        events = d.events + excluded.events,
        identified_events = d.identified_events + excluded.identified_events;
    END IF;
    -- Each touched profile's days, once over all its days and once over its identified ones: the
    -- gap to the previous day (91 and more: not within the 90 days `days` can span) and whether
    -- there is a later one.
    INSERT INTO user_day_changes
    SELECT project_id, day, identified, least(gap, 91), last, sum(sign)
    FROM (
      SELECT d.project_id, d.day, false AS identified,
        coalesce(d.day - lag(d.day) OVER by_profile, 91) AS gap, lead(d.day) OVER by_profile IS NULL AS last
      FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
      WINDOW by_profile AS (PARTITION BY d.project_id, d.profile_id ORDER BY d.day)
      UNION ALL
      SELECT d.project_id, d.day, true,
        coalesce(d.day - lag(d.day) OVER by_profile, 91), lead(d.day) OVER by_profile IS NULL
      FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
      WHERE d.identified_events > 0
      WINDOW by_profile AS (PARTITION BY d.project_id, d.profile_id ORDER BY d.day)
    ) AS days
    GROUP BY 1, 2, 3, 4, 5;
    -- Each touched profile's Monday weeks with an identified event: its cohort (the first) and the
    -- next one.
    INSERT INTO retention_week_changes
    SELECT project_id, cohort, week, next_week, sum(sign)
    FROM (
      SELECT project_id, week, min(week) OVER by_profile AS cohort, lead(week) OVER by_profile AS next_week
      FROM (
        SELECT DISTINCT d.project_id, d.profile_id, d.day - (extract(isodow FROM d.day)::integer - 1) AS week
        FROM profile_days d JOIN activity_profiles t ON t.project_id = d.project_id AND t.profile_id = d.profile_id
        WHERE d.identified_events > 0
      ) AS active_weeks
      WINDOW by_profile AS (PARTITION BY project_id, profile_id ORDER BY week)
    ) AS weeks
    GROUP BY 1, 2, 3, 4;
  END LOOP;

  INSERT INTO active_user_days AS a (project_id, day, identified, gap, last, users)
  SELECT project_id, day, identified, gap, last, sum(users) FROM user_day_changes
  GROUP BY 1, 2, 3, 4, 5 HAVING sum(users) <> 0
  ON CONFLICT (project_id, identified, day, gap, last) DO UPDATE SET users = a.users + excluded.users;
  DELETE FROM active_user_days a USING user_day_changes c
  WHERE a.users = 0 AND a.project_id = c.project_id AND a.identified = c.identified AND a.day = c.day
    AND a.gap = c.gap AND a.last = c.last;
  INSERT INTO retention_weeks AS r (project_id, cohort, week, next_week, users)
  SELECT project_id, cohort, week, next_week, sum(users) FROM retention_week_changes
  GROUP BY 1, 2, 3, 4 HAVING sum(users) <> 0
  ON CONFLICT (project_id, cohort, week, next_week) DO UPDATE SET users = r.users + excluded.users;
  DELETE FROM retention_weeks r USING retention_week_changes c
  WHERE r.users = 0 AND r.project_id = c.project_id AND r.cohort = c.cohort AND r.week = c.week
    AND r.next_week IS NOT DISTINCT FROM c.next_week;

  IF from_xid = 0 THEN
    ANALYZE profile_days, active_user_days, retention_weeks;
  END IF;
  INSERT INTO activity_timezones (project_id, timezone)
  SELECT project_id, timezone FROM activity_zones
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE activity_timezones.timezone IS DISTINCT FROM excluded.timezone;
  UPDATE derived_state SET processed_xid = next_xid, last_run_at = now() WHERE name = 'activity';
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
-- refresh_profile_summaries(next_xid, sessions_rebuilt): the profile summaries
-- (src/db/schema/profile-summaries.ts) from the events whose ingest_xid lies between its watermark
-- derived_state('profiles') and next_xid, the snapshot xmin refresh_session_family
-- (src/db/routines/refresh_session_family.sql) took first, after the session rollups have run in
-- the same transaction. Events never change once stored, so a run merges what the new events carry: the
-- earliest and latest time (the latest event, ties broken by id, gives the last-known attributes),
-- whether one was identified and the latest that was, and their count. Session counts are recounted, through the
-- (project_id, profile_id, started_at) index of sessions, for the profiles whose sessions this run
-- changed: the visitor of a new session, and both visitors of one a late earlier event handed from
-- one to another; and for the profiles new to the summaries, whose sessions may have been written
-- before their events reached this routine (the session family reads every committed event, this
-- one those below next_xid). A session that only grew changes no count, so its visitor is not
-- counted again each minute it runs, whatever its history of sessions. All of them are recounted
-- when the sessions were rebuilt whole. The first run (watermark 0) reads every event.
CREATE OR REPLACE FUNCTION refresh_profile_summaries(next_xid bigint, sessions_rebuilt boolean) RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
SET jit = off
SET random_page_cost = 1.1
AS $fn$
DECLARE
  -- Its temporary tables, their disk given back when it ends (src/db/routines/free_temporary_tables.sql).
  scratch_tables constant text[] := ARRAY['profile_delta', 'new_profiles', 'recounted_profiles'];
  from_xid bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('refresh_profile_summaries'));
  INSERT INTO derived_state (name) VALUES ('profiles') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'profiles';
  IF from_xid = 0 THEN
    TRUNCATE profile_summaries;
  END IF;

  PERFORM free_temporary_tables(VARIADIC scratch_tables);
  -- Per profile of the new events (found through the ingest_xid BRIN index; none when no
  -- transaction has ended since the last run, while the sessions may still have changed): its
  -- latest event with that event's attributes, its first time, its count and whether one was
  -- identified.
  CREATE TEMPORARY TABLE profile_delta ON COMMIT DROP AS
  SELECT DISTINCT ON (e.project_id, e.profile_id) e.project_id, e.profile_id,
    min(e.created_at) OVER by_profile AS first_seen_at, e.created_at AS last_seen_at, e.id AS last_event_id,
    bool_or(e.profile_id <> e.device_id) OVER by_profile AS identified,
    max(e.created_at) FILTER (WHERE e.profile_id <> e.device_id) OVER by_profile AS last_identified_at,
    e.country, e.city, e.device, e.browser,
    count(*) OVER by_profile AS event_count
  FROM events e
  WHERE e.ingest_xid >= from_xid AND e.ingest_xid < next_xid
  WINDOW by_profile AS (PARTITION BY e.project_id, e.profile_id)
  ORDER BY e.project_id, e.profile_id, e.created_at DESC, e.id DESC;

  -- The profiles new to the summaries, told apart by the upsert itself: a new row holds only this
  -- run's events, a stored one (at least one event) more. Asked of the table beforehand, the same
  -- took 0.7 s a run at 1,000 events/s. Not needed on a first run, which recounts every profile.
  CREATE TEMPORARY TABLE new_profiles (project_id text, profile_id text) ON COMMIT DROP;
  WITH upserted AS (
    INSERT INTO profile_summaries AS p (project_id, profile_id, first_seen_at, last_seen_at, last_event_id, identified,
      last_identified_at, country, city, device, browser, event_count, session_count)
    SELECT project_id, profile_id, first_seen_at, last_seen_at, last_event_id, identified,
      last_identified_at, country, city, device, browser, event_count, 0
    FROM profile_delta
    ON CONFLICT (project_id, profile_id) DO UPDATE SET
      first_seen_at = least(p.first_seen_at, excluded.first_seen_at),
      identified = p.identified OR excluded.identified,
      last_identified_at = greatest(p.last_identified_at, excluded.last_identified_at),
      event_count = p.event_count + excluded.event_count,
      -- The attributes follow the latest event, whichever run brought it.
      country = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.country ELSE p.country END,
      city = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.city ELSE p.city END,
      device = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.device ELSE p.device END,
      browser = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.browser ELSE p.browser END,
      last_event_id = CASE WHEN (excluded.last_seen_at, excluded.last_event_id) > (p.last_seen_at, p.last_event_id) THEN excluded.last_event_id ELSE p.last_event_id END,
      last_seen_at = greatest(p.last_seen_at, excluded.last_seen_at)
    RETURNING p.project_id, p.profile_id, p.event_count
  )
  INSERT INTO new_profiles
  SELECT u.project_id, u.profile_id FROM upserted u
  JOIN profile_delta d ON d.project_id = u.project_id AND d.profile_id = u.profile_id
  WHERE from_xid > 0 AND u.event_count = d.event_count;

  IF from_xid = 0 OR sessions_rebuilt THEN
    UPDATE profile_summaries p SET session_count = c.sessions
    FROM (SELECT project_id, profile_id, count(*)::int AS sessions FROM sessions GROUP BY project_id, profile_id) AS c
    WHERE p.project_id = c.project_id AND p.profile_id = c.profile_id AND p.session_count <> c.sessions;
  ELSE
    -- touched_before and touched_after: the rewritten sessions before and after this run
    -- (refresh_session_rollups, src/db/routines/refresh_session_rollups.sql).
    CREATE TEMPORARY TABLE recounted_profiles ON COMMIT DROP AS
    SELECT project_id, profile_id FROM new_profiles
    UNION SELECT a.project_id, a.profile_id FROM touched_after a
      LEFT JOIN touched_before b ON b.project_id = a.project_id AND b.id = a.id
      WHERE b.id IS NULL OR b.profile_id IS DISTINCT FROM a.profile_id
    UNION SELECT b.project_id, b.profile_id FROM touched_before b
      JOIN touched_after a ON a.project_id = b.project_id AND a.id = b.id
      WHERE a.profile_id IS DISTINCT FROM b.profile_id;
    UPDATE profile_summaries p SET session_count = c.sessions
    FROM (
      SELECT r.project_id, r.profile_id,
        (SELECT count(*)::int FROM sessions s WHERE s.project_id = r.project_id AND s.profile_id = r.profile_id) AS sessions
      FROM recounted_profiles r
    ) AS c
    WHERE p.project_id = c.project_id AND p.profile_id = c.profile_id AND p.session_count <> c.sessions;
  END IF;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now() WHERE name = 'profiles';
  PERFORM free_temporary_tables(VARIADIC scratch_tables);
END;
$fn$;
--> statement-breakpoint
-- refresh_session_family(wait): the session family of refresh_derived (src/db/routines/refresh_derived.sql)
-- in one transaction, and the number of sessions it recomputed:
-- - refresh_session_rollups (src/db/routines/refresh_session_rollups.sql): sessions, session
--   pages, and the hourly and daily session, page and visitor rollups, the pairs, the strings and
--   the sketches per value;
-- - refresh_profile_summaries (src/db/routines/refresh_profile_summaries.sql): one row per profile,
--   its session counts from the sessions just written.
-- It reads and writes none of the event family's tables (src/db/routines/refresh_event_family.sql),
-- so the two can run at once on two connections, as the cron trigger runs them
-- (src/queries/derived.ts). With `wait` it waits for a run under way, as refresh_derived() does;
-- without, it returns NULL at once, folding nothing, while another run holds the lock.
CREATE OR REPLACE FUNCTION refresh_session_family(wait boolean) RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  -- Taken first: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  sessions_rebuilt boolean;
BEGIN
  -- The lock refresh_session_rollups takes, one run at a time: held by this transaction from here.
  IF NOT wait AND NOT pg_try_advisory_xact_lock(hashtext('refresh_derived')) THEN
    RETURN NULL;
  END IF;
  -- Read before the session family moves them: a watermark at 0 (or absent) means it rebuilds whole.
  sessions_rebuilt := coalesce((SELECT min(processed_xid) FROM derived_state WHERE name IN ('sessions', 'rollups')), 0) = 0
    OR (SELECT count(*) FROM derived_state WHERE name IN ('sessions', 'rollups')) < 2;
  touched := refresh_session_rollups();
  PERFORM refresh_profile_summaries(next_xid, sessions_rebuilt);
  -- The touched sessions (src/db/routines/refresh_session_rollups.sql): on a first build a copy of
  -- every session, freed now rather than at commit (src/db/routines/free_temporary_tables.sql).
  PERFORM free_temporary_tables('touched_sessions', 'touched_before', 'touched_after', 'touched_pages_before',
    'touched_names_before', 'touched_pages', 'touched_names', 'rollup_zones');
  RETURN touched;
END;
$fn$;
--> statement-breakpoint
-- refresh_session_rollups(): the session family of the derived tables. It derives `sessions`, one
-- row per (project_id, session_id), from the events, and then, in the same transaction, the
-- session and page rollups per hour and day with the session pages (refresh_rollups,
-- src/db/routines/refresh_rollups.sql), the visitor sketches per hour and day
-- (refresh_visitor_sketches, src/db/routines/refresh_visitor_sketches.sql) and per day and
-- dimension value (refresh_dimension_sketches, src/db/routines/refresh_dimension_sketches.sql),
-- the session aggregates per day and pair of dimension values (refresh_pair_rollups,
-- src/db/routines/refresh_pair_rollups.sql) and the page aggregates per day and dimension value
-- (refresh_page_dimension_rollups, src/db/routines/refresh_page_dimension_rollups.sql) and the
-- entry and exit pages per hour and day (refresh_entry_exit_rollups,
-- src/db/routines/refresh_entry_exit_rollups.sql) and the bit strings per day over its sessions
-- (refresh_session_bits, src/db/routines/refresh_session_bits.sql), so both
-- query paths always see the same data. It returns the number of sessions it wrote.
-- refresh_session_family (src/db/routines/refresh_session_family.sql) calls it, and the
-- one-run-at-a-time lock taken here bears the name of the entry point refresh_derived()
-- (src/db/routines/refresh_derived.sql).
--
-- It is the only writer of `sessions`. It is incremental (it recomputes only the sessions that
-- received events since its last run) and idempotent (a session is always recomputed from all of
-- its events, so running it again, or feeding the same events in one batch or in many, gives the
-- same rows).
--
-- "Since the last run" is tracked by the writing transaction's id (events.ingest_xid) rather than
-- by time or a sequence, so out-of-order commits are never missed: a run folds in every visible
-- row at or above the watermark, then moves the watermark to the oldest transaction that was
-- still open when it started. Rows it could not see yet all lie above that point; rows it saw
-- above it are folded in again next time, which is harmless because a run is idempotent.
--
-- Sessions are computed in one sorted pass: one sort of narrow rows by (session, time) feeds two
-- window aggregates and one group aggregate, and the first event's attributes are then fetched by
-- its id. (Joining four derived sets, first event, totals, entry and exit, behind a materialized
-- CTE was quadratic: the planner has no statistics for such a CTE, estimated a handful of rows and
-- chose nested loops, minutes for 50k events.) A cron run touches few sessions and takes
-- milliseconds. New sessions are inserted in the order they started (see the ORDER BY below);
-- existing rows keep their place.
--
-- The touched sessions are kept in a temporary table, and their rows and pages as they were before
-- this run in two others, so that the routines after the upsert can subtract what they were and add
-- what they are (the sketches: merge or rebuild). The first run, and any run after the 'rollups'
-- watermark was reset to 0 (by a migration that adds or reshapes a derived table), build every
-- derived table whole. A project whose timezone is new or changed gets all of its days rebuilt.
CREATE OR REPLACE FUNCTION refresh_session_rollups() RETURNS integer
LANGUAGE plpgsql
-- A bulk load sorts every new event once; give that sort room instead of spilling to disk.
SET work_mem = '256MB'
-- Scans and aggregates that gain nothing from JIT compilation, which costs hundreds of milliseconds.
SET jit = off
-- A run reaches the touched sessions' events, rows and pages by index, the newest rows of their
-- tables and cached. At the default cost of a random read (4) the planner judged a scan of all
-- 10M events and 8M session pages cheaper than 27,000 index lookups and took seconds
-- (10M events at 1,000 events/s: 40 s a run -> 31 s); every routine below runs with this too.
SET random_page_cost = 1.1
-- DROP TABLE IF EXISTS of the temporary tables would notice "schema pg_temp does not exist".
SET client_min_messages = warning
AS $fn$
DECLARE
  from_xid bigint;
  rollups_xid bigint;
  -- Taken before anything else: every transaction below it had finished when this run began.
  next_xid bigint := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
  touched integer;
  rebuild_all boolean;
BEGIN
  -- One run at a time: a concurrent caller waits here, then finds little left to do.
  PERFORM pg_advisory_xact_lock(hashtext('refresh_derived'));
  INSERT INTO derived_state (name) VALUES ('sessions'), ('rollups') ON CONFLICT (name) DO NOTHING;
  SELECT processed_xid INTO from_xid FROM derived_state WHERE name = 'sessions';
  SELECT processed_xid INTO rollups_xid FROM derived_state WHERE name = 'rollups';

  rebuild_all := from_xid = 0 OR rollups_xid = 0;

  DROP TABLE IF EXISTS pg_temp.touched_sessions, pg_temp.touched_before, pg_temp.touched_after, pg_temp.touched_pages_before,
    pg_temp.touched_names_before;
  CREATE TEMPORARY TABLE touched_sessions (project_id text, session_id text) ON COMMIT DROP;
  -- The touched sessions as they were before this run (none for new ones), their pages and names.
  CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  -- ...and as this run writes them (filled by the upsert below).
  CREATE TEMPORARY TABLE touched_after ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
  CREATE TEMPORARY TABLE touched_pages_before ON COMMIT DROP AS SELECT * FROM session_pages WITH NO DATA;
  CREATE TEMPORARY TABLE touched_names_before ON COMMIT DROP AS SELECT * FROM session_names WITH NO DATA;
  IF from_xid > 0 THEN
    INSERT INTO touched_sessions SELECT DISTINCT project_id, session_id FROM events WHERE ingest_xid >= from_xid;
    ANALYZE touched_sessions;
    INSERT INTO touched_before SELECT s.*
    FROM touched_sessions t JOIN sessions s ON s.project_id = t.project_id AND s.id = t.session_id;
    ANALYZE touched_before;
    -- A session's pages carry its start: found through it, by the (project_id, started_at) index.
    INSERT INTO touched_pages_before SELECT p.*
    FROM touched_before b JOIN session_pages p ON p.project_id = b.project_id AND p.started_at = b.started_at AND p.session_id = b.id;
    ANALYZE touched_pages_before;
    INSERT INTO touched_names_before SELECT n.*
    FROM touched_before b JOIN session_names n ON n.project_id = b.project_id AND n.started_at = b.started_at AND n.session_id = b.id;
    ANALYZE touched_names_before;
  END IF;

  -- Every event of every session that received one since the last run. Planned afresh each
  -- time (EXECUTE): the first run reads all events without a join, later runs reach the few
  -- touched sessions through the indexes.
  EXECUTE format($sql$
  WITH ordered AS (
    -- The sort key starts with the high-cardinality session id, in byte order ("C"): comparisons
    -- are then memcmp on abbreviated keys rather than the locale's collation (3x faster here).
    -- The grouping below reuses that order.
    SELECT e.session_id COLLATE "C" AS session_id, e.project_id COLLATE "C" AS project_id, e.id, e.name, e.created_at, e.revenue, e.path, e.origin,
      row_number() OVER in_order AS position,
      count(*) FILTER (WHERE e.name = 'screen_view') OVER in_order AS views_so_far,
      count(*) FILTER (WHERE e.name = 'screen_view') OVER (PARTITION BY e.session_id COLLATE "C", e.project_id COLLATE "C") AS views
    FROM events e
    WHERE %1$s
    WINDOW in_order AS (PARTITION BY e.session_id COLLATE "C", e.project_id COLLATE "C" ORDER BY e.created_at, e.id ROWS UNBOUNDED PRECEDING)
  ),
  summary AS (
    SELECT session_id, project_id,
      min(created_at) AS started_at, max(created_at) AS ended_at, count(*)::int AS event_count,
      max(views)::int AS views, coalesce(sum(revenue), 0)::bigint AS revenue,
      -- Entry and exit pages: the first and the last screen view in time order.
      max(path) FILTER (WHERE name = 'screen_view' AND views_so_far = 1) AS entry_path,
      max(origin) FILTER (WHERE name = 'screen_view' AND views_so_far = 1) AS entry_origin,
      max(path) FILTER (WHERE name = 'screen_view' AND views_so_far = views) AS exit_path,
      max(origin) FILTER (WHERE name = 'screen_view' AND views_so_far = views) AS exit_origin,
      (array_agg(id) FILTER (WHERE position = 1))[1] AS first_event_id
    FROM ordered
    GROUP BY session_id, project_id
  )%2$s
  INSERT INTO sessions (
    project_id, id, started_at, ended_at, duration_ms, event_count, screen_view_count, is_bounce, revenue,
    entry_path, entry_origin, exit_path, exit_origin, profile_id, device_id, referrer, referrer_name, referrer_type, utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, region, city, device, brand, model, browser, browser_version, os, os_version
  )
  SELECT s.project_id, s.session_id, s.started_at, s.ended_at,
      (extract(epoch FROM s.ended_at - s.started_at) * 1000)::bigint,
      s.event_count, s.views, s.views <= 1, s.revenue, s.entry_path, s.entry_origin, s.exit_path, s.exit_origin,
      -- Visitor and attributes: those of the first event.
      first_event.profile_id, first_event.device_id, first_event.referrer, first_event.referrer_name, first_event.referrer_type, first_event.utm_source, first_event.utm_medium, first_event.utm_campaign, first_event.utm_term, first_event.utm_content, first_event.country, first_event.region, first_event.city, first_event.device, first_event.brand, first_event.model, first_event.browser, first_event.browser_version, first_event.os, first_event.os_version
  FROM summary s
  JOIN events first_event ON first_event.id = s.first_event_id
  -- New sessions are written in the order they started, as live ingest appends them, so a
  -- window's sessions share pages also after a bulk load: a filtered one-day query then reads a
  -- few hundred pages instead of one per session scattered over the whole table. A cron run
  -- sorts a handful of rows, and a bulk load does not slow down measurably (a 1M-event seed:
  -- 28.5 vs 29.3 s).
  ORDER BY s.started_at
  ON CONFLICT (project_id, id) DO UPDATE SET
    profile_id = excluded.profile_id,
    device_id = excluded.device_id,
    started_at = excluded.started_at,
    ended_at = excluded.ended_at,
    duration_ms = excluded.duration_ms,
    event_count = excluded.event_count,
    screen_view_count = excluded.screen_view_count,
    is_bounce = excluded.is_bounce,
    revenue = excluded.revenue,
    entry_path = excluded.entry_path,
    entry_origin = excluded.entry_origin,
    exit_path = excluded.exit_path,
    exit_origin = excluded.exit_origin,
    referrer = excluded.referrer,
    referrer_name = excluded.referrer_name,
    referrer_type = excluded.referrer_type,
    utm_source = excluded.utm_source,
    utm_medium = excluded.utm_medium,
    utm_campaign = excluded.utm_campaign,
    utm_term = excluded.utm_term,
    utm_content = excluded.utm_content,
    country = excluded.country,
    region = excluded.region,
    city = excluded.city,
    device = excluded.device,
    brand = excluded.brand,
    model = excluded.model,
    browser = excluded.browser,
    browser_version = excluded.browser_version,
    os = excluded.os,
    os_version = excluded.os_version
  %3$s
  $sql$, CASE WHEN from_xid = 0 THEN 'true' ELSE
    '(e.project_id, e.session_id) IN (SELECT project_id, session_id FROM touched_sessions)' END,
    -- After a first run, the rows written are also kept as `touched_after`: every routine below
    -- reads the touched sessions from it rather than looking each one up again.
    CASE WHEN from_xid > 0 THEN ', upserted AS (' ELSE '' END,
    CASE WHEN from_xid > 0 THEN 'RETURNING sessions.*) INSERT INTO touched_after SELECT * FROM upserted' ELSE '' END);
  GET DIAGNOSTICS touched = ROW_COUNT;
  ANALYZE touched_after;

  PERFORM refresh_rollups(rebuild_all);
  PERFORM refresh_visitor_sketches(rebuild_all);
  PERFORM refresh_dimension_sketches(rebuild_all);
  PERFORM refresh_pair_rollups(rebuild_all);
  PERFORM refresh_page_dimension_rollups(rebuild_all);
  PERFORM refresh_entry_exit_rollups(rebuild_all, next_xid);
  PERFORM refresh_session_bits(rebuild_all);
  -- After a full build, fresh statistics ahead of autovacuum (which had not reached the 1.5 GB of
  -- pair rows 20 minutes after a 10M-event build): the next runs' upserts and the queries are
  -- planned from what the tables hold.
  IF rebuild_all THEN
    ANALYZE session_rollups, session_day_rollups, page_rollups, page_day_rollups, visitor_sketches,
      visitor_day_sketches, visitor_dimension_sketches, session_pair_rollups, page_dimension_rollups,
      entry_exit_rollups, entry_exit_day_rollups, session_day_bits, session_day_slices, page_day_bits,
      page_day_slices, visitor_ordinals, visitor_day_bits, visitor_day_mixed, session_day_ordinals;
  END IF;
  INSERT INTO rollup_timezones (project_id, timezone)
  SELECT id, coalesce(timezone, 'UTC') FROM projects
  ON CONFLICT (project_id) DO UPDATE SET timezone = excluded.timezone
  WHERE rollup_timezones.timezone IS DISTINCT FROM excluded.timezone;

  UPDATE derived_state SET processed_xid = greatest(processed_xid, next_xid), last_run_at = now()
  WHERE name IN ('sessions', 'rollups');
  RETURN touched;
END;
$fn$;
--> statement-breakpoint
-- The cron trigger now runs the two families at once (refresh_session_family, refresh_event_family,
-- each without waiting); the single-connection variant it called before is no longer used.
DROP FUNCTION IF EXISTS refresh_derived_unless_running();
