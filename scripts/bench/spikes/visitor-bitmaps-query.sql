-- The visitors query of the spike (see visitor-bitmaps-build.sql), with psql variables:
--   psql <bench database> -v project=demo -v country=US -v device=mobile \
--     -v from=2026-10-27 -v to=2026-11-26 -f scripts/bench/spikes/visitor-bitmaps-query.sql
\timing on
-- Visitors of the window: per day, the visitors with a session of each value (AND), ORed over the days.
with per_day as materialized (
  select a.bits & b.bits as bits
  from spike_visitor_bitmaps a
  join spike_visitor_bitmaps b on b.project_id = a.project_id and b.day = a.day and b.dimension = 'device' and b.value = :'device'
  where a.project_id = :'project' and a.dimension = 'country' and a.value = :'country'
    and a.day >= :'from' and a.day < :'to'
)
select bit_count(bit_or(bits)) as visitors from per_day;
