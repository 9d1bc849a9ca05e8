-- The queries of the spike (see the matching *-build.sql), with psql variables for the filter values:
--   psql <bench database> -v project=demo -v country=US -v device=mobile -v browser='Chrome Mobile' \
--     -v from=2026-10-27 -v to=2026-11-26 -f scripts/bench/spikes/session-bitmaps-query.sql
\timing on
-- Two filters over 30 whole days: sessions and bounces from the bit strings.
select sum(bit_count(a.bits & b.bits)) as sessions,
       sum(coalesce(bit_count(a.bits & b.bits & c.bits), 0)) as bounces
from spike_bitmaps a
join spike_bitmaps b on b.project_id = a.project_id and b.day = a.day and b.dimension = 'device' and b.value = :'device'
left join spike_bitmaps c on c.project_id = a.project_id and c.day = a.day and c.dimension = 'bounce' and c.value = 'true'
where a.project_id = :'project' and a.dimension = 'country' and a.value = :'country'
  and a.day >= :'from' and a.day < :'to';
-- Three filters.
select sum(bit_count(a.bits & b.bits & d.bits)) as sessions
from spike_bitmaps a
join spike_bitmaps b on b.project_id = a.project_id and b.day = a.day and b.dimension = 'device' and b.value = :'device'
join spike_bitmaps d on d.project_id = a.project_id and d.day = a.day and d.dimension = 'browser' and d.value = :'browser'
where a.project_id = :'project' and a.dimension = 'country' and a.value = :'country'
  and a.day >= :'from' and a.day < :'to';
-- Exact visitors: the set bits' ordinals, looked up for their profile.
with m as materialized (
  select a.day, a.bits & b.bits as bits
  from spike_bitmaps a
  join spike_bitmaps b on b.project_id = a.project_id and b.day = a.day and b.dimension = 'device' and b.value = :'device'
  where a.project_id = :'project' and a.dimension = 'country' and a.value = :'country'
    and a.day >= :'from' and a.day < :'to'
), pos as (
  select m.day, (p.i - 1)::int as ord
  from m, string_to_table(m.bits::text, null) with ordinality as p(bit, i)
  where p.bit = '1'
)
select count(*) as sessions, count(distinct o.profile_id) as visitors
from pos join spike_ordinals o on o.project_id = :'project' and o.day = pos.day and o.ord = pos.ord;
-- The same from the sessions (the exact path's plain SQL).
select count(*) as sessions, count(*) filter (where is_bounce) as bounces, count(distinct profile_id) as visitors
from sessions
where project_id = :'project' and started_at >= :'from'::date and started_at < :'to'::date
  and country = :'country' and device = :'device';
select count(*) as sessions from sessions
where project_id = :'project' and started_at >= :'from'::date and started_at < :'to'::date
  and country = :'country' and device = :'device' and browser = :'browser';
