CREATE TABLE "event_rollups" (
	"project_id" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	"name" text NOT NULL,
	"dimension" text NOT NULL,
	"value" text,
	"events" integer NOT NULL,
	"duration_sum" bigint NOT NULL,
	"duration_min" integer NOT NULL,
	"duration_max" integer NOT NULL,
	"revenue_sum" bigint NOT NULL,
	"revenue_min" bigint NOT NULL,
	"revenue_max" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "event_rollups_project_dimension_hour_idx" ON "event_rollups" USING btree ("project_id","dimension","hour");