-- The session properties built again with their marks (a NULL-valued row where a path holds an
-- object, an array or a long text), so that property filters other than `is` can read them: under
-- the refresh's lock, as in 0092, without resetting any watermark.
SELECT pg_advisory_xact_lock(hashtext('refresh_derived'));
--> statement-breakpoint
SELECT refresh_session_properties(true);
