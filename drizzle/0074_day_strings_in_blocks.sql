-- The strings per project day over its sessions are cut into blocks of 524,288 session numbers
-- (src/db/routines/day_block_bits.sql). A string stored whole for its day is block 0 when its day
-- has at most 524,288 sessions (27,000 a day at 10 million events over 90 days); a longer one is cut
-- here into its blocks, a block without a set bit left out. The routines that write and read the
-- blocks follow in 0075.
DROP INDEX "page_day_bits_day_idx";--> statement-breakpoint
DROP INDEX "page_day_slices_page_idx";--> statement-breakpoint
DROP INDEX "session_day_bits_day_idx";--> statement-breakpoint
ALTER TABLE "session_day_slices" DROP CONSTRAINT "session_day_slices_project_id_day_measure_slice_pk";--> statement-breakpoint
ALTER TABLE "session_day_bits" ADD COLUMN "block" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "session_day_bits" ALTER COLUMN "block" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "session_day_slices" ADD COLUMN "block" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "session_day_slices" ALTER COLUMN "block" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "page_day_bits" ADD COLUMN "block" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "page_day_bits" ALTER COLUMN "block" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "page_day_slices" ADD COLUMN "block" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "page_day_slices" ALTER COLUMN "block" DROP DEFAULT;--> statement-breakpoint
WITH long_strings AS (DELETE FROM "session_day_bits" WHERE length(sessions) > 524288 RETURNING *)
INSERT INTO "session_day_bits" (project_id, day, block, dimension, name, prefix, sessions)
SELECT project_id, day, k, dimension, name, prefix, substring(sessions FROM k * 524288 + 1 FOR 524288)
FROM long_strings CROSS JOIN generate_series(0, (length(sessions) - 1) / 524288) AS k
WHERE bit_count(substring(sessions FROM k * 524288 + 1 FOR 524288)) > 0;--> statement-breakpoint
WITH long_strings AS (DELETE FROM "session_day_slices" WHERE length(sessions) > 524288 RETURNING *)
INSERT INTO "session_day_slices" (project_id, day, block, measure, slice, sessions)
SELECT project_id, day, k, measure, slice, substring(sessions FROM k * 524288 + 1 FOR 524288)
FROM long_strings CROSS JOIN generate_series(0, (length(sessions) - 1) / 524288) AS k
WHERE bit_count(substring(sessions FROM k * 524288 + 1 FOR 524288)) > 0;--> statement-breakpoint
WITH long_strings AS (DELETE FROM "page_day_bits" WHERE length(sessions) > 524288 RETURNING *)
INSERT INTO "page_day_bits" (project_id, day, block, origin, path, title, sessions)
SELECT project_id, day, k, origin, path, title, substring(sessions FROM k * 524288 + 1 FOR 524288)
FROM long_strings CROSS JOIN generate_series(0, (length(sessions) - 1) / 524288) AS k
WHERE bit_count(substring(sessions FROM k * 524288 + 1 FOR 524288)) > 0;--> statement-breakpoint
WITH long_strings AS (DELETE FROM "page_day_slices" WHERE length(sessions) > 524288 RETURNING *)
INSERT INTO "page_day_slices" (project_id, day, block, origin, path, measure, slice, sessions)
SELECT project_id, day, k, origin, path, measure, slice, substring(sessions FROM k * 524288 + 1 FOR 524288)
FROM long_strings CROSS JOIN generate_series(0, (length(sessions) - 1) / 524288) AS k
WHERE bit_count(substring(sessions FROM k * 524288 + 1 FOR 524288)) > 0;--> statement-breakpoint
ALTER TABLE "session_day_slices" ADD CONSTRAINT "session_day_slices_project_id_day_block_measure_slice_pk" PRIMARY KEY("project_id","day","block","measure","slice");--> statement-breakpoint
CREATE INDEX "page_day_bits_day_idx" ON "page_day_bits" USING btree ("project_id","day","block");--> statement-breakpoint
CREATE INDEX "page_day_slices_page_idx" ON "page_day_slices" USING btree ("project_id","day","block",coalesce("path", ''),coalesce("origin", ''));--> statement-breakpoint
CREATE INDEX "session_day_bits_day_idx" ON "session_day_bits" USING btree ("project_id","day","block","dimension");
