-- member_page_events(): how many numbered events of a day one row of event_day_members holds
-- (src/db/routines/refresh_event_bits.sql): event `n` of a day is entry n % 896 + 1 of page
-- n / 896. 896 hashes of 8 bytes make an array of about 7 KB, which a PLAIN column keeps in its
-- heap row (a row must fit a page of 8 KB): a chart (src/queries/charts/event-members.ts) reads a
-- page's entries with one index probe and no TOAST fetch, and a day of 110,000 events (10 million
-- over 90 days) is 123 pages a segment. The chart queries read it here, so the two cannot disagree.
CREATE OR REPLACE FUNCTION member_page_events() RETURNS integer
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $fn$
  SELECT 896
$fn$;
