CREATE TABLE "session_properties" (
	"project_id" text NOT NULL,
	"session_id" text NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"path" text[] NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "session_properties_project_started_idx" ON "session_properties" USING btree ("project_id","started_at");--> statement-breakpoint
CREATE INDEX "session_properties_project_value_idx" ON "session_properties" USING btree ("project_id","path","value","started_at","session_id");