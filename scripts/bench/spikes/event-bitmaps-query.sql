-- The queries of the chart spike (see event-bitmaps-build.sql), with psql variables for the two
-- filters (columns and values) and the series' event name; the breakdown is by browser:
--   psql <bench database> -v project=demo -v a=os -v av=iOS -v b=referrer_name -v bv=Google \
--     -v event=screen_view -v from=2026-11-01 -v to=2026-12-01 -f scripts/bench/spikes/event-bitmaps-query.sql
-- Each answer is followed by the same question asked of the events (the exact path's reading).
\timing on
-- The event segment: per day, the AND of the filters' and the name's strings, counted with each
-- browser's string.
with m as materialized (
  select f1.day, f1.bits & f2.bits & n.bits as bits
  from spike_event_bits f1
  join spike_event_bits f2 on f2.day = f1.day and f2.dimension = :'b' and f2.value = :'bv'
  join spike_event_bits n on n.day = f1.day and n.dimension = 'name' and n.value = :'event'
  where f1.dimension = :'a' and f1.value = :'av'
), counted as (
  select m.day, x.value as browser, bit_count(m.bits & x.bits) as events
  from m join spike_event_bits x on x.day = m.day and x.dimension = 'browser'
)
select count(*) as groups, sum(events) as events, md5(string_agg(day || browser || events, ',' order by day, browser))
from counted where events > 0;
with counted as (
  select (created_at at time zone 'UTC')::date as day, browser, count(*) as events
  from events
  where project_id = :'project' and created_at >= :'from'::date and created_at < :'to'::date
    and name = :'event' and nullif(:"a", '') = :'av' and nullif(:"b", '') = :'bv' and nullif(browser, '') is not null
  group by 1, 2
)
select count(*) as groups, sum(events) as events, md5(string_agg(day || browser || events, ',' order by day, browser))
from counted;

-- The user and session segments: the positions of the mask's set bits (split at each '1', the
-- runs of '0' before them give the gaps), then each event's visitor, session and browser.
with m as materialized (
  select f1.day, f1.bits & f2.bits & n.bits as bits
  from spike_event_bits f1
  join spike_event_bits f2 on f2.day = f1.day and f2.dimension = :'b' and f2.value = :'bv'
  join spike_event_bits n on n.day = f1.day and n.dimension = 'name' and n.value = :'event'
  where f1.dimension = :'a' and f1.value = :'av'
), runs as (
  select m.day, r.i, r.total, sum(length(r.run) + 1) over (partition by m.day order by r.i) - 1 as ord
  from m cross join lateral (
    select run, i, count(*) over () as total from unnest(string_to_array(m.bits::text, '1')) with ordinality as u(run, i)
  ) as r
), positions as (select day, ord::int as ord from runs where i < total),
counted as (
  select p.day, o.browser, count(distinct o.profile_id) as users, count(distinct o.session_id) as sessions
  from positions p join spike_event_ordinals o on o.day = p.day and o.ord = p.ord
  where o.browser is not null
  group by 1, 2
)
select count(*) as groups, sum(users) as users, sum(sessions) as sessions,
  md5(string_agg(day || browser || users || '/' || sessions, ',' order by day, browser))
from counted;
with counted as (
  select (created_at at time zone 'UTC')::date as day, browser,
    count(distinct profile_id) as users, count(distinct session_id) as sessions
  from events
  where project_id = :'project' and created_at >= :'from'::date and created_at < :'to'::date
    and name = :'event' and nullif(:"a", '') = :'av' and nullif(:"b", '') = :'bv' and nullif(browser, '') is not null
  group by 1, 2
)
select count(*) as groups, sum(users) as users, sum(sessions) as sessions,
  md5(string_agg(day || browser || users || '/' || sessions, ',' order by day, browser))
from counted;
