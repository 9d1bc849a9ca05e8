CREATE INDEX "events_project_name_time_idx" ON "events" USING btree ("project_id","name","created_at") INCLUDE ("session_id","profile_id");
