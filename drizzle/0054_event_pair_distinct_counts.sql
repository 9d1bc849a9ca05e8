ALTER TABLE "event_pair_rollups" ADD COLUMN "profiles" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "event_pair_rollups" ADD COLUMN "sessions" integer DEFAULT 0 NOT NULL;