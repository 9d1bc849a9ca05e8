CREATE TABLE "page_dimension_rollups" (
	"project_id" text NOT NULL,
	"origin" text,
	"path" text,
	"title" text,
	"sessions" integer NOT NULL,
	"pageviews" integer NOT NULL,
	"bounces" integer NOT NULL,
	"duration_ms" bigint NOT NULL,
	"timed_views" integer NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"dimension" text NOT NULL,
	"name" text,
	CONSTRAINT "page_dimension_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","dimension","day","name","origin","path","title")
);
