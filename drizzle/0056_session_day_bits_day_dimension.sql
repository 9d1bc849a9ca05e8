DROP INDEX "session_day_bits_day_idx";--> statement-breakpoint
CREATE INDEX "session_day_bits_day_idx" ON "session_day_bits" USING btree ("project_id","day","dimension");