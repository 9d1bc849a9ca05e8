-- A page of event_day_members holds 896 hashes (7 KB; src/db/routines/member_page_events.sql).
-- Stored PLAIN, the array stays in its heap row: neither compressed (random hashes do not shrink)
-- nor moved out of line, so a chart reads a page's entries with the row it probes, with no TOAST
-- fetch and no copy of the array per entry read.
ALTER TABLE "event_day_members" ALTER COLUMN "members" SET STORAGE PLAIN;
--> statement-breakpoint
-- The event strings of every project were built before event_day_members existed, so no numbered
-- event has its members. Forgetting the zone they were built in makes the next refresh build each
-- project's strings and members again from its events (refresh_event_bits); until then no chart
-- reads the strings, and the pair rows or the events answer.
DELETE FROM event_bit_timezones;
