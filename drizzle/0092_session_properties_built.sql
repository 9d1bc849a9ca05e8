-- The session properties of the sessions derived so far, built once here rather than by resetting
-- the refresh's watermark (which would rebuild every derived table): under the refresh's lock, so
-- no run meets the table half built. Sessions derived later bring their rows with them.
SELECT pg_advisory_xact_lock(hashtext('refresh_derived'));
--> statement-breakpoint
SELECT refresh_session_properties(true);
