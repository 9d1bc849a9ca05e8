-- A measurement spike for issue 15 (docs/design/filtered-dashboards.md, "Two and three filters"), not
-- part of the schema: run by hand on a benchmark database, e.g.
--   psql postgres://postgres@127.0.0.1:5432/bench_3000000_90_1 -f scripts/bench/spikes/bit-slices-build.sql
-- It writes spike_* tables next to the data set (after session-bitmaps-build.sql); drop them afterwards.
\timing on
select max(duration_ms), max(screen_view_count), max(revenue) from spike_ordinals where project_id = 'demo';
drop table if exists spike_slices;
-- Bit k of each session's duration (ms), as one bit string per (project, day, k): the sum over a
-- mask is sum over k of 2^k * bit_count(mask & slice_k).
create table spike_slices as
with cells as (
  select o.project_id, o.day, k, o.ord / 8 as byte_i, sum(1 << (7 - o.ord % 8))::int as v
  from spike_ordinals o cross join generate_series(0, 31) as k
  where (o.duration_ms >> k) & 1 = 1
  group by 1, 2, 3, 4
), gaps as (
  select *, byte_i - coalesce(lag(byte_i) over w, -1) - 1 as gap
  from cells window w as (partition by project_id, day, k order by byte_i)
), hex as (
  select project_id, day, k, max(byte_i) as last_i,
    string_agg(repeat('00', gap::int) || lpad(to_hex(v), 2, '0'), '' order by byte_i) as body
  from gaps group by 1, 2, 3
)
select h.project_id, h.day, h.k, ('x' || h.body || repeat('00', ((s.n + 7) / 8 - 1 - h.last_i)::int))::bit varying as bits
from hex h join spike_day_sizes s using (project_id, day);
create index on spike_slices (project_id, day, k);
analyze spike_slices;
select pg_size_pretty(pg_total_relation_size('spike_slices')), count(*) from spike_slices;
