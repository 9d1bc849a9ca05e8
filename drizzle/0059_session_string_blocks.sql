-- The strings are cut into blocks of each day's sessions: the stored ones (one per day) are
-- emptied here and built again, in blocks, by the next migration. The block's columns are added
-- before the key that holds them (drizzle-kit wrote the key first).
TRUNCATE "session_day_bits", "session_day_slices", "page_day_bits", "page_day_slices";--> statement-breakpoint
DROP INDEX "page_day_bits_day_idx";--> statement-breakpoint
DROP INDEX "session_day_bits_day_idx";--> statement-breakpoint
DROP INDEX "page_day_slices_page_idx";--> statement-breakpoint
ALTER TABLE "page_day_bits" ADD COLUMN "block" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "page_day_slices" ADD COLUMN "block" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "session_day_bits" ADD COLUMN "block" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "session_day_slices" ADD COLUMN "block" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "session_day_slices" DROP CONSTRAINT "session_day_slices_project_id_day_measure_slice_pk";--> statement-breakpoint
ALTER TABLE "session_day_slices" ADD CONSTRAINT "session_day_slices_project_id_day_block_measure_slice_pk" PRIMARY KEY("project_id","day","block","measure","slice");--> statement-breakpoint
CREATE INDEX "page_day_bits_block_idx" ON "page_day_bits" USING btree ("project_id","day","block");--> statement-breakpoint
CREATE INDEX "session_day_bits_block_idx" ON "session_day_bits" USING btree ("project_id","day","block","dimension");--> statement-breakpoint
CREATE INDEX "page_day_slices_page_idx" ON "page_day_slices" USING btree ("project_id","day","block",coalesce("path", ''),coalesce("origin", ''));
