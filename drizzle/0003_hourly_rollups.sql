CREATE TABLE "page_rollups" (
	"project_id" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
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
CREATE TABLE "rollup_timezones" (
	"project_id" text PRIMARY KEY NOT NULL,
	"timezone" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_rollups" (
	"project_id" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
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
CREATE TABLE "visitor_day_sketches" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"plane" smallint NOT NULL,
	"registers" bit(32768) NOT NULL,
	CONSTRAINT "visitor_day_sketches_project_id_day_plane_pk" PRIMARY KEY("project_id","day","plane")
);
--> statement-breakpoint
CREATE TABLE "visitor_sketches" (
	"project_id" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	"plane" smallint NOT NULL,
	"registers" bit(32768) NOT NULL,
	CONSTRAINT "visitor_sketches_project_id_hour_plane_pk" PRIMARY KEY("project_id","hour","plane")
);
--> statement-breakpoint
CREATE INDEX "page_rollups_project_hour_idx" ON "page_rollups" USING btree ("project_id","hour");--> statement-breakpoint
CREATE INDEX "session_rollups_project_dimension_hour_idx" ON "session_rollups" USING btree ("project_id","dimension","hour");