-- The queries of the first-event spike (see event-firsts-build.sql): a chart of screen_view by
-- browser and UTC day over the data set's days, filtered on os = :os and :rdim = :ref (rdim is
-- referrer_name or country), its members (the schema's segment) per day and browser counted three ways:
--   A, as src/queries/charts/event-members.ts does: each matching event's member hash looked up in
--     its page of 896 and counted distinct;
--   B, from the strings: the representatives among the matching events counted, and the matching
--     events that differ from their representative in a column the chart reads, whose
--     representative does not match, their representatives counted distinct, each found by a probe;
--   B2, as B with the deviants' representatives read a page of 896 at a time (the firsts table);
--   B3, as B2 with the deviants found once per day and given their browser by its strings (slower);
--   B4, the day's deviants listed per column (devlist), tested against the masks with get_bit;
--   B5, the day's matching deviants cut from one text a day, then tested per browser with get_bit.
--   psql <bench database> -v sch=spike_session -v os=iOS -v rdim=referrer_name -v ref=Google \
--     [-v mode=time] -f scripts/bench/spikes/event-firsts-query.sql
-- mode check (the default) compares A and B to B5 with the same count read from the numbered events (C);
-- mode time runs each under EXPLAIN ANALYZE (timing off) for its execution time.
set jit = off;
-- The matching events per day and browser, computed once (a view would AND the stored strings,
-- which TOAST keeps compressed past 2 KB, again at each reference).
\timing on
create temp table mb as
select m.day, b.val as b0, m.mask & b.events as events
from (select o.day, o.events & r.events & n.events as mask
      from :"sch".bits o
      join :"sch".bits r on r.day = o.day and r.dim = :'rdim' and r.val = :'ref'
      join :"sch".bits n on n.day = o.day and n.dim = 'name' and n.val = 'screen_view'
      where o.dim = 'os' and o.val = :'os') m
join :"sch".bits b on b.day = m.day and b.dim = 'browser';
analyze mb;
create temp table md as
select o.day, o.events & r.events & n.events as mask
from :"sch".bits o
join :"sch".bits r on r.day = o.day and r.dim = :'rdim' and r.val = :'ref'
join :"sch".bits n on n.day = o.day and n.dim = 'name' and n.val = 'screen_view'
where o.dim = 'os' and o.val = :'os';
analyze md;
\timing off
\set a_sql 'select day, b0, count(distinct member) as members from (select p.day, e.b0, mem.members[e.entry] as member from (select n.day, n.number / 896 as page, array_agg(n.number % 896 + 1) as entries, array_agg(n.b0) as vals from (select g.day, g.b0, r.position as number from mb g cross join lateral (select string_to_array(g.events::text, $$1$$) as runs) as cut cross join lateral (select (sum(length(u.run) + 1) over (order by u.i) - 1)::integer as position from unnest(cut.runs[1:cardinality(cut.runs) - 1]) with ordinality as u(run, i)) as r where bit_count(g.events) > 0) n group by 1, 2) p join ' :sch '.members mem on mem.day = p.day and mem.page = p.page cross join lateral unnest(p.entries, p.vals) as e(entry, b0)) x where member is not null group by 1, 2'
-- B: the representatives among the matching events counted, and the matching deviants (in a column
-- the chart reads) whose representative does not match, their representatives counted distinct.
-- The mask is made again in memory behind a fence (OFFSET 0): read from the temporary table, each
-- get_bit per deviant would decompress the stored 11 KB string again (25 against 11 µs a probe).
\set b_sql 'select g.day, g.b0, bit_count(g.events & f.events) + case when bit_count(g.events & v.events) = 0 then 0 else coalesce((select count(distinct d.first) from (select string_to_array((g.events & v.events)::text, $$1$$) as runs) as cut cross join lateral (select (sum(length(u.run) + 1) over (order by u.i) - 1)::integer as position from unnest(cut.runs[1:cardinality(cut.runs) - 1]) with ordinality as u(run, i)) as r join ' :sch '.devmap d on d.day = g.day and d.ordinal = r.position where get_bit(g.events, d.first) = 0), 0) end as members from (select day, b0, events & events as events from mb offset 0) g join ' :sch '.bits f on f.day = g.day and f.dim = $$first$$ and f.val = $$screen_view$$ cross join lateral (select bit_or(x.events) as events from ' :sch '.bits x where x.day = g.day and x.val = $$screen_view$$ and x.dim in ($$deviant:os$$, $$deviant:browser$$, $$deviant:$$ || ' :'rdim' ')) v where bit_count(g.events) > 0'
-- B2: as B, but each deviant's representative read from its page of 896 (the firsts table, one
-- probe per page for all of its entries, as A reads the members), not a probe per deviant.
\set b2_sql 'select g.day, g.b0, bit_count(g.events & f.events) + case when bit_count(g.events & v.events) = 0 then 0 else coalesce((select count(distinct fp.firsts[e.entry]) from (select n.position / 896 as page, array_agg(n.position % 896 + 1) as entries from (select (sum(length(u.run) + 1) over (order by u.i) - 1)::integer as position from unnest((select string_to_array((g.events & v.events)::text, $$1$$) as runs)[1:cardinality(string_to_array((g.events & v.events)::text, $$1$$)) - 1]) with ordinality as u(run, i)) as n group by 1) as p join ' :sch '.firsts fp on fp.day = g.day and fp.page = p.page cross join lateral unnest(p.entries) as e(entry) where get_bit(g.events, fp.firsts[e.entry]) = 0), 0) end as members from (select day, b0, events & events as events from mb offset 0) g join ' :sch '.bits f on f.day = g.day and f.dim = $$first$$ and f.val = $$screen_view$$ cross join lateral (select bit_or(x.events) as events from ' :sch '.bits x where x.day = g.day and x.val = $$screen_view$$ and x.dim in ($$deviant:os$$, $$deviant:browser$$, $$deviant:$$ || ' :'rdim' ')) v where bit_count(g.events) > 0'
-- B3: the deviants found once per day (the day's mask, not each browser's), their representatives
-- read a page at a time, each given its browser by the browser strings' bit at its number.
\set b3_sql 'with days as (select day, mask & mask as mask from md offset 0), deviant as (select d.day, n.position from days d cross join lateral (select bit_or(x.events) as events from ' :sch '.bits x where x.day = d.day and x.val = $$screen_view$$ and x.dim in ($$deviant:os$$, $$deviant:browser$$, $$deviant:$$ || ' :'rdim' ')) v cross join lateral (select string_to_array((d.mask & v.events)::text, $$1$$) as runs) as cut cross join lateral (select (sum(length(u.run) + 1) over (order by u.i) - 1)::integer as position from unnest(cut.runs[1:cardinality(cut.runs) - 1]) with ordinality as u(run, i)) as n where bit_count(d.mask & v.events) > 0), unmatched as (select p.day, e.entry - 1 + p.page * 896 as position, fp.firsts[e.entry] as first from (select day, position / 896 as page, array_agg(position % 896 + 1) as entries from deviant group by 1, 2) p join ' :sch '.firsts fp on fp.day = p.day and fp.page = p.page cross join lateral unnest(p.entries) as e(entry)), late as (select u.day, b.val as b0, count(distinct u.first) as members from unmatched u join days d on d.day = u.day join (select day, val, events & events as events from ' :sch '.bits where dim = $$browser$$ offset 0) b on b.day = u.day and get_bit(b.events, u.position) = 1 where get_bit(d.mask, u.first) = 0 or get_bit(b.events, u.first) = 0 group by 1, 2) select g.day, g.b0, bit_count(g.events & f.events) + coalesce(l.members, 0) as members from (select day, b0, events & events as events from mb offset 0) g join ' :sch '.bits f on f.day = g.day and f.dim = $$first$$ and f.val = $$screen_view$$ left join late l on l.day = g.day and l.b0 = g.b0 where bit_count(g.events) > 0'
-- B4: the day's listed deviants of the chart's columns (devlist) tested against the day's mask,
-- the matching ones kept per day, then each day and browser tests its few with get_bit.
\set b4_sql 'with days as materialized (select day, mask & mask as mask from md), cand as materialized (select d.day, array_agg(u.ordinal) as ordinals, array_agg(u.first) as firsts from days d join ' :sch '.devlist l on l.day = d.day and l.name = $$screen_view$$ and l.col in ($$os$$, $$browser$$, ' :'rdim' ') cross join lateral unnest(l.ordinals, l.firsts) as u(ordinal, first) where get_bit(d.mask, u.ordinal) = 1 group by 1) select g.day, g.b0, bit_count(g.events & f.events) + coalesce((select count(distinct u.first) from unnest(c.ordinals, c.firsts) as u(ordinal, first) where get_bit(g.events, u.ordinal) = 1 and get_bit(g.events, u.first) = 0), 0) as members from (select day, b0, events & events as events from mb offset 0) g join ' :sch '.bits f on f.day = g.day and f.dim = $$first$$ and f.val = $$screen_view$$ left join cand c on c.day = g.day where bit_count(g.events) > 0'
-- B5: as B4, but the day's matching deviants found from the text of (day mask & its deviants'
-- strings), once per day, their representatives read a page at a time (firsts): no list to scan.
\set b5_sql 'with days as materialized (select d.day, d.mask & d.mask as mask, d.mask & v.events as deviants from md d cross join lateral (select bit_or(x.events) as events from ' :sch '.bits x where x.day = d.day and x.val = $$screen_view$$ and x.dim in ($$deviant:os$$, $$deviant:browser$$, $$deviant:$$ || ' :'rdim' ')) v), positions as (select d.day, n.position from days d cross join lateral (select string_to_array(d.deviants::text, $$1$$) as runs) as cut cross join lateral (select (sum(length(u.run) + 1) over (order by u.i) - 1)::integer as position from unnest(cut.runs[1:cardinality(cut.runs) - 1]) with ordinality as u(run, i)) as n where bit_count(d.deviants) > 0), cand as materialized (select p.day, array_agg(p.page * 896 + e.entry - 1) as ordinals, array_agg(fp.firsts[e.entry]) as firsts from (select day, position / 896 as page, array_agg(position % 896 + 1) as entries from positions group by 1, 2) p join ' :sch '.firsts fp on fp.day = p.day and fp.page = p.page cross join lateral unnest(p.entries) as e(entry) group by 1) select g.day, g.b0, bit_count(g.events & f.events) + coalesce((select count(distinct u.first) from unnest(c.ordinals, c.firsts) as u(ordinal, first) where get_bit(g.events, u.ordinal) = 1 and get_bit(g.events, u.first) = 0), 0) as members from (select day, b0, events & events as events from mb offset 0) g join ' :sch '.bits f on f.day = g.day and f.dim = $$first$$ and f.val = $$screen_view$$ left join cand c on c.day = g.day where bit_count(g.events) > 0'
\if :{?mode}
\else
\set mode check
\endif
select :'mode' = 'check' as checking \gset
\if :checking
create temp table a as :a_sql;
create temp table b as :b_sql;
create temp table b2 as :b2_sql;
create temp table b3 as :b3_sql;
create temp table b4 as :b4_sql;
create temp table b5 as :b5_sql;
create temp table c as
select day, browser as b0, count(distinct member) as members
from :"sch".ev where name = 'screen_view' and os = :'os' and browser is not null and member is not null
  and (case :'rdim' when 'country' then country else referrer_name end) = :'ref'
group by 1, 2;
select (select sum(bit_count(events)) from mb) as matching_events,
  (select count(*) from c) as groups, (select sum(members) from c) as members,
  (select count(*) from a full join c using (day, b0) where a.members is distinct from c.members) as a_wrong,
  (select count(*) from (select * from b where members > 0) b full join c using (day, b0) where b.members is distinct from c.members) as b_wrong,
  (select count(*) from (select * from b2 where members > 0) b2 full join c using (day, b0) where b2.members is distinct from c.members) as b2_wrong,
  (select count(*) from (select * from b3 where members > 0) b3 full join c using (day, b0) where b3.members is distinct from c.members) as b3_wrong,
  (select count(*) from (select * from b4 where members > 0) b4 full join c using (day, b0) where b4.members is distinct from c.members) as b4_wrong,
  (select count(*) from (select * from b5 where members > 0) b5 full join c using (day, b0) where b5.members is distinct from c.members) as b5_wrong;
\else
explain (analyze, timing off, summary on) :a_sql;
explain (analyze, timing off, summary on) :b_sql;
explain (analyze, timing off, summary on) :b2_sql;
explain (analyze, timing off, summary on) :b3_sql;
explain (analyze, timing off, summary on) :b4_sql;
explain (analyze, timing off, summary on) :b5_sql;
\endif
