CREATE TABLE "event_pair_rollups" (
	"project_id" text NOT NULL,
	"day" date NOT NULL,
	"first_at" timestamp (3) with time zone NOT NULL,
	"name" text NOT NULL,
	"dimension" text NOT NULL,
	"value" text,
	"by_dimension" text NOT NULL,
	"by_value" text,
	"events" integer NOT NULL,
	"duration_sum" bigint NOT NULL,
	"duration_min" integer NOT NULL,
	"duration_max" integer NOT NULL,
	"revenue_sum" bigint NOT NULL,
	"revenue_min" bigint NOT NULL,
	"revenue_max" bigint NOT NULL,
	CONSTRAINT "event_pair_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","dimension","by_dimension","value","name","day","by_value")
);
--> statement-breakpoint
CREATE TABLE "event_pair_timezones" (
	"project_id" text PRIMARY KEY NOT NULL,
	"timezone" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "event_pair_rollups_by_value_idx" ON "event_pair_rollups" USING btree ("project_id","dimension","by_dimension","by_value","name","day","value");