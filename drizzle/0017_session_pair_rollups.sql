CREATE TABLE "session_pair_rollups" (
	"project_id" text NOT NULL,
	"dimension" text NOT NULL,
	"name" text,
	"prefix" text,
	"sessions" integer NOT NULL,
	"bounces" integer NOT NULL,
	"screen_views" bigint NOT NULL,
	"duration_ms" bigint NOT NULL,
	"timed_sessions" integer NOT NULL,
	"revenue" bigint NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"by_dimension" text NOT NULL,
	"by_name" text,
	"by_prefix" text,
	CONSTRAINT "session_pair_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","dimension","by_dimension","day","name","prefix","by_name","by_prefix")
);
