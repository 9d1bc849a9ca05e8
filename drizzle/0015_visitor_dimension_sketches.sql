CREATE TABLE "visitor_dimension_sketches" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"dimension" text NOT NULL,
	"name" text,
	"plane" smallint NOT NULL,
	"registers" bit(32768),
	"entries" integer[],
	CONSTRAINT "visitor_dimension_sketches_key" UNIQUE NULLS NOT DISTINCT("project_id","dimension","name","day","plane")
);
