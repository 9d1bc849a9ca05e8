CREATE TABLE "page_day_bits" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"origin" text,
	"path" text,
	"title" text,
	"sessions" bit varying NOT NULL
);
--> statement-breakpoint
CREATE TABLE "page_day_slices" (
	"project_id" text NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"origin" text,
	"path" text,
	"measure" text NOT NULL,
	"slice" smallint NOT NULL,
	"sessions" bit varying NOT NULL
);
--> statement-breakpoint
CREATE INDEX "page_day_bits_day_idx" ON "page_day_bits" USING btree ("project_id","day");--> statement-breakpoint
CREATE INDEX "page_day_slices_read_idx" ON "page_day_slices" USING btree ("project_id","day","path","origin");