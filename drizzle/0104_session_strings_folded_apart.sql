CREATE TABLE "session_bit_timezones" (
	"project_id" text PRIMARY KEY NOT NULL,
	"timezone" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "session_day_ordinals" ADD COLUMN "visitor" integer;