DROP INDEX "event_rollups_project_dimension_hour_idx";--> statement-breakpoint
DROP INDEX "page_day_rollups_project_day_idx";--> statement-breakpoint
DROP INDEX "page_rollups_project_hour_idx";--> statement-breakpoint
DROP INDEX "session_day_rollups_project_dimension_day_idx";--> statement-breakpoint
DROP INDEX "session_rollups_project_dimension_hour_idx";--> statement-breakpoint
ALTER TABLE "event_rollups" ADD CONSTRAINT "event_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","dimension","hour","name","value");--> statement-breakpoint
ALTER TABLE "page_day_rollups" ADD CONSTRAINT "page_day_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","day","origin","path","title");--> statement-breakpoint
ALTER TABLE "page_rollups" ADD CONSTRAINT "page_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","hour","origin","path","title");--> statement-breakpoint
ALTER TABLE "session_day_rollups" ADD CONSTRAINT "session_day_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","dimension","day","name","prefix");--> statement-breakpoint
ALTER TABLE "session_rollups" ADD CONSTRAINT "session_rollups_key" UNIQUE NULLS NOT DISTINCT("project_id","dimension","hour","name","prefix");