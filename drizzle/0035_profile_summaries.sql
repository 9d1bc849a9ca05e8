CREATE TABLE "profile_summaries" (
	"project_id" text NOT NULL,
	"profile_id" text NOT NULL,
	"first_seen_at" timestamp (3) with time zone NOT NULL,
	"last_seen_at" timestamp (3) with time zone NOT NULL,
	"last_event_id" uuid NOT NULL,
	"identified" boolean NOT NULL,
	"country" text,
	"city" text,
	"device" text,
	"browser" text,
	"event_count" bigint NOT NULL,
	"session_count" integer NOT NULL,
	CONSTRAINT "profile_summaries_project_id_profile_id_pk" PRIMARY KEY("project_id","profile_id")
);
--> statement-breakpoint
CREATE INDEX "profile_summaries_project_first_seen_idx" ON "profile_summaries" USING btree ("project_id","first_seen_at");--> statement-breakpoint
CREATE INDEX "events_project_profile_time_idx" ON "events" USING btree ("project_id","profile_id","created_at","id");--> statement-breakpoint
CREATE INDEX "sessions_project_profile_started_idx" ON "sessions" USING btree ("project_id","profile_id","started_at");