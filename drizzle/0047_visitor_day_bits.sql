CREATE TABLE "visitor_day_bits" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"dimension" text NOT NULL,
	"name" text,
	"chunk" integer NOT NULL,
	"visitors" bit varying NOT NULL
);
--> statement-breakpoint
CREATE TABLE "visitor_day_mixed" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"dimension" text NOT NULL,
	"ordinal" integer NOT NULL,
	"sessions" integer[] NOT NULL,
	CONSTRAINT "visitor_day_mixed_project_id_day_dimension_ordinal_pk" PRIMARY KEY("project_id","day","dimension","ordinal")
);
--> statement-breakpoint
CREATE TABLE "visitor_ordinals" (
	"project_id" text NOT NULL,
	"profile_id" text NOT NULL,
	"ordinal" integer NOT NULL,
	CONSTRAINT "visitor_ordinals_project_id_profile_id_pk" PRIMARY KEY("project_id","profile_id"),
	CONSTRAINT "visitor_ordinals_ordinal_key" UNIQUE("project_id","ordinal")
);
--> statement-breakpoint
CREATE INDEX "visitor_day_bits_read_idx" ON "visitor_day_bits" USING btree ("project_id","dimension","name","day");--> statement-breakpoint
CREATE INDEX "visitor_day_bits_day_idx" ON "visitor_day_bits" USING btree ("project_id","day");