CREATE TABLE "event_day_first_pages" (
	"project_id" text NOT NULL,
	"segment" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"page" integer NOT NULL,
	"firsts" integer[] NOT NULL,
	CONSTRAINT "event_day_first_pages_project_id_segment_day_page_pk" PRIMARY KEY("project_id","segment","day","page")
);
--> statement-breakpoint
CREATE TABLE "event_day_firsts" (
	"project_id" text NOT NULL,
	"segment" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"member" bigint NOT NULL,
	"number" integer NOT NULL,
	"chart_values" text[] NOT NULL,
	CONSTRAINT "event_day_firsts_project_id_segment_day_member_pk" PRIMARY KEY("project_id","segment","day","member")
);
