-- A measurement spike for issue 15 (docs/design/filtered-dashboards.md, "Two and three filters"), not
-- part of the schema: run by hand on a benchmark database, e.g.
--   psql postgres://postgres@127.0.0.1:5432/bench_3000000_90_1 -f scripts/bench/spikes/session-bitmaps-build.sql
-- It writes spike_* tables next to the data set; drop them afterwards.
\timing on
-- Session ordinals per project and UTC day (sessions in start order).
drop table if exists spike_ordinals, spike_bitmaps, spike_day_sizes;
create table spike_ordinals as
select project_id, (started_at at time zone 'UTC')::date as day,
  (row_number() over (partition by project_id, (started_at at time zone 'UTC')::date order by started_at, id) - 1)::int as ord,
  id as session_id, profile_id, country, device, browser, referrer_name, utm_source, os,
  duration_ms, screen_view_count, is_bounce, revenue
from sessions;
create index on spike_ordinals (project_id, day, ord) include (profile_id);
create table spike_day_sizes as select project_id, day, count(*)::int as n from spike_ordinals group by 1, 2;
-- One bit string per (project, day, dimension, value): bit `ord` set for the day's sessions with that value.
create table spike_bitmaps as
with cells as (
  select o.project_id, o.day, d.dimension, d.value, o.ord / 8 as byte_i, sum(1 << (7 - o.ord % 8))::int as v
  from spike_ordinals o
  cross join lateral (values ('country', o.country), ('device', o.device), ('browser', o.browser),
    ('referrer_name', o.referrer_name), ('utm_source', o.utm_source), ('os', o.os),
    ('bounce', case when o.is_bounce then 'true' end)) as d(dimension, value)
  where d.value is not null and d.value <> ''
  group by 1, 2, 3, 4, 5
), gaps as (
  select *, byte_i - coalesce(lag(byte_i) over w, -1) - 1 as gap
  from cells window w as (partition by project_id, day, dimension, value order by byte_i)
), hex as (
  select project_id, day, dimension, value, max(byte_i) as last_i,
    string_agg(repeat('00', gap::int) || lpad(to_hex(v), 2, '0'), '' order by byte_i) as body
  from gaps group by 1, 2, 3, 4
)
select h.project_id, h.day, h.dimension, h.value,
  ('x' || h.body || repeat('00', ((s.n + 7) / 8 - 1 - h.last_i)::int))::bit varying as bits
from hex h join spike_day_sizes s using (project_id, day);
create index on spike_bitmaps (project_id, dimension, value, day);
select pg_size_pretty(pg_total_relation_size('spike_bitmaps')) as bitmaps, count(*) from spike_bitmaps;
select pg_size_pretty(pg_total_relation_size('spike_ordinals')) as ordinals;
