-- A measurement spike for issue 15 (docs/design/filtered-dashboards.md, "Two and three filters"), not
-- part of the schema: run by hand on a benchmark database after session-bitmaps-build.sql, e.g.
--   psql postgres://postgres@127.0.0.1:5432/bench_3000000_90_1 -f scripts/bench/spikes/visitor-bitmaps-build.sql
-- It writes spike_* tables next to the data set; drop them afterwards.
\timing on
drop table if exists spike_visitor_ordinals, spike_visitor_bitmaps;
create table spike_visitor_ordinals as
select project_id, profile_id, (row_number() over (partition by project_id order by min(started_at), profile_id) - 1)::int as vord
from sessions group by project_id, profile_id;
create index on spike_visitor_ordinals (project_id, profile_id);
select project_id, count(*) from spike_visitor_ordinals group by 1;
-- Per (project, day, dimension, value): bit `vord` set for the visitors with a session of that value that day.
create table spike_visitor_bitmaps as
with s as (
  select o.project_id, o.day, d.dimension, d.value, v.vord
  from spike_ordinals o
  join spike_visitor_ordinals v using (project_id, profile_id)
  cross join lateral (values ('country', o.country), ('device', o.device), ('browser', o.browser)) as d(dimension, value)
  where d.value is not null and d.value <> ''
), cells as (
  select project_id, day, dimension, value, vord / 8 as byte_i, bit_or(1 << (7 - vord % 8))::int as v
  from s group by 1, 2, 3, 4, 5
), gaps as (
  select *, byte_i - coalesce(lag(byte_i) over w, -1) - 1 as gap
  from cells window w as (partition by project_id, day, dimension, value order by byte_i)
), hex as (
  select project_id, day, dimension, value, max(byte_i) as last_i,
    string_agg(repeat('00', gap::int) || lpad(to_hex(v), 2, '0'), '' order by byte_i) as body
  from gaps group by 1, 2, 3, 4
), sizes as (select project_id, count(*)::int as n from spike_visitor_ordinals group by 1)
select h.project_id, h.day, h.dimension, h.value,
  ('x' || h.body || repeat('00', ((z.n + 7) / 8 - 1 - h.last_i)::int))::bit varying as bits
from hex h join sizes z using (project_id);
create index on spike_visitor_bitmaps (project_id, dimension, value, day);
analyze spike_visitor_bitmaps;
select pg_size_pretty(pg_total_relation_size('spike_visitor_bitmaps')), count(*) from spike_visitor_bitmaps;
