CREATE TABLE "entry_exit_day_rollups" (
	"project_id" text NOT NULL,
	"mode" text NOT NULL,
	"origin" text,
	"path" text,
	"sessions" integer NOT NULL,
	"bounces" integer NOT NULL,
	"screen_views" bigint NOT NULL,
	"revenue" bigint NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "entry_exit_day_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","mode","day","origin","path")
);
--> statement-breakpoint
CREATE TABLE "entry_exit_rollups" (
	"project_id" text NOT NULL,
	"mode" text NOT NULL,
	"origin" text,
	"path" text,
	"sessions" integer NOT NULL,
	"bounces" integer NOT NULL,
	"screen_views" bigint NOT NULL,
	"revenue" bigint NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "entry_exit_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","mode","hour","origin","path")
);
