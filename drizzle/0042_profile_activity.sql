CREATE TABLE "active_user_days" (
	"project_id" text NOT NULL,
	"day" date NOT NULL,
	"identified" boolean NOT NULL,
	"gap" smallint NOT NULL,
	"last" boolean NOT NULL,
	"users" integer NOT NULL,
	CONSTRAINT "active_user_days_key" UNIQUE("project_id","identified","day","gap","last")
);
--> statement-breakpoint
CREATE TABLE "activity_timezones" (
	"project_id" text PRIMARY KEY NOT NULL,
	"timezone" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "profile_days" (
	"project_id" text NOT NULL,
	"profile_id" text NOT NULL,
	"day" date NOT NULL,
	"events" integer NOT NULL,
	"identified_events" integer NOT NULL,
	CONSTRAINT "profile_days_project_id_profile_id_day_pk" PRIMARY KEY("project_id","profile_id","day")
);
--> statement-breakpoint
CREATE TABLE "retention_weeks" (
	"project_id" text NOT NULL,
	"cohort" date NOT NULL,
	"week" date NOT NULL,
	"next_week" date,
	"users" integer NOT NULL,
	CONSTRAINT "retention_weeks_key" UNIQUE NULLS NOT DISTINCT("project_id","cohort","week","next_week")
);
