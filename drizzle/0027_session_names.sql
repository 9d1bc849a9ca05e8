CREATE TABLE "session_names" (
	"project_id" text NOT NULL,
	"session_id" text NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"name" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "session_names_project_started_idx" ON "session_names" USING btree ("project_id","started_at");--> statement-breakpoint
CREATE INDEX "session_names_project_name_idx" ON "session_names" USING btree ("project_id","name","started_at","session_id");