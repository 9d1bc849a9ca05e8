CREATE TABLE "event_bit_timezones" (
	"project_id" text PRIMARY KEY NOT NULL,
	"timezone" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_day_bits" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"block" integer NOT NULL,
	"dimension" text NOT NULL,
	"name" text,
	"events" bit varying NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_day_sizes" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"size" integer NOT NULL,
	CONSTRAINT "event_day_sizes_project_id_day_pk" PRIMARY KEY("project_id","day")
);
--> statement-breakpoint
CREATE INDEX "event_day_bits_read_idx" ON "event_day_bits" USING btree ("project_id","dimension","name","day");--> statement-breakpoint
CREATE INDEX "event_day_bits_day_idx" ON "event_day_bits" USING btree ("project_id","day","block","dimension");