CREATE TABLE "page_day_rollups" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"origin" text,
	"path" text,
	"title" text,
	"sessions" integer NOT NULL,
	"pageviews" integer NOT NULL,
	"bounces" integer NOT NULL,
	"duration_ms" bigint NOT NULL,
	"timed_views" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_day_rollups" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"dimension" text NOT NULL,
	"name" text,
	"prefix" text,
	"sessions" integer NOT NULL,
	"bounces" integer NOT NULL,
	"screen_views" bigint NOT NULL,
	"duration_ms" bigint NOT NULL,
	"timed_sessions" integer NOT NULL,
	"revenue" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "page_day_rollups_project_day_idx" ON "page_day_rollups" USING btree ("project_id","day");--> statement-breakpoint
CREATE INDEX "session_day_rollups_project_dimension_day_idx" ON "session_day_rollups" USING btree ("project_id","dimension","day");