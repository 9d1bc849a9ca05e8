CREATE TABLE "session_day_ordinals" (
	"project_id" text NOT NULL,
	"session_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"ordinal" integer NOT NULL,
	CONSTRAINT "session_day_ordinals_project_id_session_id_pk" PRIMARY KEY("project_id","session_id"),
	CONSTRAINT "session_day_ordinals_ordinal_key" UNIQUE("project_id","day","ordinal")
);
