-- A measurement spike for issue 15 (docs/design/filtered-dashboards.md, "Charts under two or three
-- filters"), not part of the schema: run by hand on a benchmark database, e.g.
--   psql postgres://postgres@127.0.0.1:5432/bench_30000000_90_1 -v project=demo \
--     -v from=2026-11-01 -v to=2026-12-01 -f scripts/bench/spikes/event-bitmaps-build.sql
-- It writes spike_event_* tables next to the data set; drop them afterwards.
--
-- Charts filter on each event's own columns, not on its session's (in the seed a session's
-- referrer and UTM fields are on its first event only), so the session strings cannot answer
-- them: this numbers the window's events per UTC day and writes a bit string per (day, column,
-- value) over those numbers, and a narrow row per event with its visitor and session.
\timing on
set work_mem = '256MB';
drop table if exists spike_event_ordinals, spike_event_day_sizes, spike_event_bits;
create table spike_event_ordinals as
select (created_at at time zone 'UTC')::date as day,
  (row_number() over (partition by (created_at at time zone 'UTC')::date order by created_at, id) - 1)::int as ord,
  name, nullif(country, '') as country, nullif(device, '') as device, nullif(browser, '') as browser,
  nullif(os, '') as os, nullif(referrer_name, '') as referrer_name, nullif(referrer_type, '') as referrer_type,
  nullif(utm_source, '') as utm_source, nullif(utm_medium, '') as utm_medium,
  nullif(utm_campaign, '') as utm_campaign, profile_id, session_id
from events
where project_id = :'project' and created_at >= :'from'::date and created_at < :'to'::date;
create index on spike_event_ordinals (day, ord) include (profile_id, session_id, browser);
create table spike_event_day_sizes as select day, count(*)::int as n from spike_event_ordinals group by 1;
-- One bit string per (day, column, value): bit `ord` set for the day's events with that value.
create table spike_event_bits as
with cells as (
  select o.day, d.dimension, d.value, o.ord / 8 as byte_i, sum(1 << (7 - o.ord % 8))::int as v
  from spike_event_ordinals o
  cross join lateral (values ('name', o.name), ('country', o.country), ('device', o.device),
    ('browser', o.browser), ('os', o.os), ('referrer_name', o.referrer_name),
    ('referrer_type', o.referrer_type), ('utm_source', o.utm_source), ('utm_medium', o.utm_medium),
    ('utm_campaign', o.utm_campaign)) as d(dimension, value)
  where d.value is not null
  group by 1, 2, 3, 4
), gaps as (
  select *, byte_i - coalesce(lag(byte_i) over w, -1) - 1 as gap
  from cells window w as (partition by day, dimension, value order by byte_i)
), hex as (
  select day, dimension, value, max(byte_i) as last_i,
    string_agg(repeat('00', gap::int) || lpad(to_hex(v), 2, '0'), '' order by byte_i) as body
  from gaps group by 1, 2, 3
)
select h.day, h.dimension, h.value,
  ('x' || h.body || repeat('00', ((s.n + 7) / 8 - 1 - h.last_i)::int))::bit varying as bits
from hex h join spike_event_day_sizes s using (day);
create index on spike_event_bits (dimension, value, day);
analyze spike_event_ordinals, spike_event_bits;
select pg_size_pretty(pg_total_relation_size('spike_event_bits')) as strings, count(*) from spike_event_bits;
select pg_size_pretty(pg_total_relation_size('spike_event_ordinals')) as ordinals, count(*) from spike_event_ordinals;
