-- The bit strings per day built again, now with the property values' strings (0097), under the
-- refresh's lock as in 0092 and 0095, without resetting any watermark: the session family's
-- strings alone, from the sessions derived so far (a full build numbers each day's sessions again
-- in start order and writes every string, so none is left half written). Its inputs of a run, the
-- sessions it touched, are empty here.
SELECT pg_advisory_xact_lock(hashtext('refresh_derived'));
--> statement-breakpoint
CREATE TEMPORARY TABLE touched_before ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
--> statement-breakpoint
CREATE TEMPORARY TABLE touched_after ON COMMIT DROP AS SELECT * FROM sessions WITH NO DATA;
--> statement-breakpoint
SELECT refresh_session_bits(true);
--> statement-breakpoint
DROP TABLE touched_before, touched_after;
