CREATE TABLE "session_day_bits" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"dimension" text NOT NULL,
	"name" text,
	"prefix" text,
	"sessions" bit varying NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_day_slices" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"measure" text NOT NULL,
	"slice" smallint NOT NULL,
	"sessions" bit varying NOT NULL,
	CONSTRAINT "session_day_slices_project_id_day_measure_slice_pk" PRIMARY KEY("project_id","day","measure","slice")
);
--> statement-breakpoint
CREATE INDEX "session_day_bits_read_idx" ON "session_day_bits" USING btree ("project_id","dimension","name","day");--> statement-breakpoint
CREATE INDEX "session_day_bits_day_idx" ON "session_day_bits" USING btree ("project_id","day");