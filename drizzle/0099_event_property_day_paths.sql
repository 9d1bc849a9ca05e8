CREATE TABLE "event_property_day_paths" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"path" text[] NOT NULL,
	"names" text[],
	"marked" boolean DEFAULT false NOT NULL,
	CONSTRAINT "event_property_day_paths_project_id_path_day_pk" PRIMARY KEY("project_id","path","day")
);
