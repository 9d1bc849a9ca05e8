-- A measurement spike for issue 15 (docs/design/filtered-dashboards.md, "Distinct members of a
-- chart from each member's first event"), not part of the schema: run by hand on a benchmark
-- database, once per segment, e.g.
--   psql postgres://postgres@127.0.0.1:5432/bench_10000000_90_1 -v sch=spike_session -v member=session_id \
--     -f scripts/bench/spikes/event-firsts-build.sql
--   (and -v sch=spike_user -v member=profile_id)
-- It writes its tables into the schema `sch` (dropped and made again); drop it afterwards.
--
-- The `user` and `session` segments of a chart under two filters count each matching event's
-- member distinct, which the event strings cannot say: today each matching event's member hash is
-- looked up (src/queries/charts/event-members.ts), work per matching event. Here each (day, member,
-- event name) has a representative, its lowest-numbered event of the day (a refresh appends higher
-- numbers, so it never changes), with a string per day and name of the representatives and, per
-- column, of the events whose value differs from their representative's. A member with a matching
-- event either has its representative among the matching events (counted by a bit count) or has a
-- matching event that differs from it in a column the chart reads (a deviant, looked up).
\timing on
drop schema if exists :"sch" cascade;
create schema :"sch";
set work_mem = '512MB';
-- The demo project's events numbered per UTC day in time order (as a build numbers them).
-- Deviants injected: every 40th event (by id hash) gets another browser, every 53rd another os,
-- so that a member's events of a day do not all carry the same values.
create table :"sch".ev as
select day, (row_number() over (partition by day order by created_at, id) - 1)::int as ordinal,
  name, member, country, device, browser, os, referrer_name, referrer_type, utm_source, utm_medium, utm_campaign
from (
  select id, created_at, date_trunc('day', created_at, 'UTC') as day, name, :member as member,
    nullif(country, '') as country, nullif(device, '') as device,
    case when abs(hashtext(id::text)) % 40 = 0 then 'Firefox' else nullif(browser, '') end as browser,
    case when abs(hashtext(id::text || 'o')) % 53 = 0 then 'iOS' else nullif(os, '') end as os,
    nullif(referrer_name, '') as referrer_name, nullif(referrer_type, '') as referrer_type,
    nullif(utm_source, '') as utm_source, nullif(utm_medium, '') as utm_medium, nullif(utm_campaign, '') as utm_campaign
  from events where project_id = 'demo'
) e;
create index on :"sch".ev (day, ordinal);
analyze :"sch".ev;
create table :"sch".sizes as select day, max(ordinal) + 1 as size from :"sch".ev group by 1;

-- Each (day, member, name)'s representative: its lowest-numbered event (a later run appends
-- higher numbers, so it never changes); members without an id (a visitor unknown) have none.
create table :"sch".rep as
select day, member, name, min(ordinal) as first from :"sch".ev where member is not null group by 1, 2, 3;
-- The events that differ from their representative, per column, with the representative's number.
create table :"sch".dev as
select e.day, e.ordinal, e.name, r.first,
  array_remove(array[
    case when e.country is distinct from f.country then 'country' end,
    case when e.device is distinct from f.device then 'device' end,
    case when e.browser is distinct from f.browser then 'browser' end,
    case when e.os is distinct from f.os then 'os' end,
    case when e.referrer_name is distinct from f.referrer_name then 'referrer_name' end,
    case when e.referrer_type is distinct from f.referrer_type then 'referrer_type' end,
    case when e.utm_source is distinct from f.utm_source then 'utm_source' end,
    case when e.utm_medium is distinct from f.utm_medium then 'utm_medium' end,
    case when e.utm_campaign is distinct from f.utm_campaign then 'utm_campaign' end], null) as columns
from :"sch".ev e
join :"sch".rep r on r.day = e.day and r.member = e.member and r.name = e.name
join :"sch".ev f on f.day = e.day and f.ordinal = r.first
where e.ordinal <> r.first
  and (e.country, e.device, e.browser, e.os, e.referrer_name, e.referrer_type, e.utm_source, e.utm_medium, e.utm_campaign)
    is distinct from (f.country, f.device, f.browser, f.os, f.referrer_name, f.referrer_type, f.utm_source, f.utm_medium, f.utm_campaign);
create table :"sch".devmap as select day, ordinal, first from :"sch".dev;
create index on :"sch".devmap (day, ordinal);
analyze :"sch".devmap;

-- The strings: per day, one per value of the columns the queries read, per name; the
-- representatives' per name; the deviants' per name and column.
create table :"sch".bits as
select g.day, g.dim, g.val, ordinal_bits(g.ords, s.size) as events
from (
  select day, 'name' as dim, name as val, array_agg(ordinal) as ords from :"sch".ev group by 1, 3
  union all select day, 'os', os, array_agg(ordinal) from :"sch".ev where os is not null group by 1, 3
  union all select day, 'referrer_name', referrer_name, array_agg(ordinal) from :"sch".ev where referrer_name is not null group by 1, 3
  union all select day, 'browser', browser, array_agg(ordinal) from :"sch".ev where browser is not null group by 1, 3
  union all select day, 'country', country, array_agg(ordinal) from :"sch".ev where country is not null group by 1, 3
  union all select day, 'first', name, array_agg(first) from :"sch".rep group by 1, 3
  union all select d.day, 'deviant:' || c.col, d.name, array_agg(d.ordinal) from :"sch".dev d cross join unnest(d.columns) as c(col) group by 1, 2, 3
) g join :"sch".sizes s on s.day = g.day;
create index on :"sch".bits (dim, val, day);
analyze :"sch".bits;

-- The members: each event's member hash, per page of 896 numbers (as event_day_members).
-- PLAIN, as event_day_members: 7 KB of random hashes in the heap row, not a TOAST fetch per entry.
create table :"sch".members (day timestamptz, page integer, members bigint[], primary key (day, page));
alter table :"sch".members alter column members set storage plain;
insert into :"sch".members
select day, ordinal / 896, array_agg(hashtextextended(member, 0) order by ordinal)
from :"sch".ev group by 1, 2;
analyze :"sch".members;
select (select count(*) from :"sch".ev) as events, (select count(*) from :"sch".rep) as representatives,
  (select count(*) from :"sch".devmap) as deviants,
  pg_size_pretty((select sum(pg_column_size(events)) from :"sch".bits where dim = 'first')) as first_strings,
  pg_size_pretty((select sum(pg_column_size(events)) from :"sch".bits where dim like 'deviant:%')) as deviant_strings,
  pg_size_pretty(pg_total_relation_size(:'sch' || '.devmap')) as devmap;

-- Each event's representative's number, per page of 896 as the members (B2 in the query spike):
-- one probe reads a page's worth of matching deviants' representatives.
create table :"sch".firsts (day timestamptz, page integer, firsts integer[], primary key (day, page));
alter table :"sch".firsts alter column firsts set storage plain;
insert into :"sch".firsts
select e.day, e.ordinal / 896, array_agg(r.first order by e.ordinal)
from :"sch".ev e left join :"sch".rep r on r.day = e.day and r.member = e.member and r.name = e.name
group by 1, 2;
analyze :"sch".firsts;

-- Each day's deviants of an event name and column as a sorted list, with their representatives'
-- numbers beside them (B4 in the query spike): tested with get_bit, no positions cut from text.
create table :"sch".devlist as
select d.day, d.name, c.col, array_agg(d.ordinal order by d.ordinal) as ordinals, array_agg(d.first order by d.ordinal) as firsts
from :"sch".dev d cross join unnest(d.columns) as c(col)
group by 1, 2, 3;
alter table :"sch".devlist add primary key (day, name, col);
analyze :"sch".devlist;
