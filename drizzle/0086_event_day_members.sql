CREATE TABLE "event_day_members" (
	"project_id" text NOT NULL,
	"segment" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"page" integer NOT NULL,
	"members" bigint[] NOT NULL,
	CONSTRAINT "event_day_members_project_id_segment_day_page_pk" PRIMARY KEY("project_id","segment","day","page")
);
