CREATE TABLE "event_key_catalogue" (
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"key" text NOT NULL,
	"events" bigint NOT NULL,
	"tracked_values" integer NOT NULL,
	"values_left_out" boolean NOT NULL,
	CONSTRAINT "event_key_catalogue_project_id_name_key_pk" PRIMARY KEY("project_id","name","key")
);
--> statement-breakpoint
CREATE TABLE "event_name_catalogue" (
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"events" bigint NOT NULL,
	"first_seen" timestamp (3) with time zone NOT NULL,
	"last_seen" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "event_name_catalogue_project_id_name_pk" PRIMARY KEY("project_id","name")
);
--> statement-breakpoint
CREATE TABLE "event_value_catalogue" (
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"events" bigint NOT NULL,
	CONSTRAINT "event_value_catalogue_project_id_name_key_value_pk" PRIMARY KEY("project_id","name","key","value")
);
