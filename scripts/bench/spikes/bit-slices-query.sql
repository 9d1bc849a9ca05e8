-- The queries of the spike (see the matching *-build.sql), with psql variables for the filter values:
--   psql <bench database> -v project=demo -v country=US -v device=mobile -v browser='Chrome Mobile' \
--     -v from=2026-10-27 -v to=2026-11-26 -f scripts/bench/spikes/bit-slices-query.sql
\timing on
with m as materialized (
  select a.day, a.bits & b.bits as bits
  from spike_bitmaps a
  join spike_bitmaps b on b.project_id = a.project_id and b.day = a.day and b.dimension = 'device' and b.value = :'device'
  where a.project_id = :'project' and a.dimension = 'country' and a.value = :'country'
    and a.day >= :'from' and a.day < :'to'
)
select sum(bit_count(m.bits & s.bits) << s.k) as duration_ms
from m join spike_slices s on s.project_id = :'project' and s.day = m.day;
select count(*), sum(duration_ms) from sessions
where project_id = :'project' and started_at >= :'from'::date and started_at < :'to'::date
  and country = :'country' and device = :'device';
