ALTER TABLE "profile_summaries" ADD COLUMN "last_identified_at" timestamp (3) with time zone;--> statement-breakpoint
-- The next refresh builds the summaries whole again, filling the new column for every profile.
UPDATE "derived_state" SET "processed_xid" = 0 WHERE "name" = 'profiles';
