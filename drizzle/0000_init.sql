CREATE TYPE "public"."client_type" AS ENUM('read', 'write', 'root');--> statement-breakpoint
CREATE TABLE "clients" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"type" "client_type" NOT NULL,
	"organization_id" text NOT NULL,
	"project_id" text,
	"secret_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "derived_state" (
	"name" text PRIMARY KEY NOT NULL,
	"processed_xid" bigint DEFAULT 0 NOT NULL,
	"last_run_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "event_meta" (
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"conversion" boolean DEFAULT false NOT NULL,
	"color" text,
	"icon" text,
	CONSTRAINT "event_meta_project_id_name_pk" PRIMARY KEY("project_id","name")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"device_id" text NOT NULL,
	"profile_id" text NOT NULL,
	"session_id" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"path" text,
	"origin" text,
	"title" text,
	"referrer" text,
	"referrer_name" text,
	"referrer_type" text,
	"duration" integer DEFAULT 0 NOT NULL,
	"revenue" bigint DEFAULT 0 NOT NULL,
	"properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"country" text,
	"region" text,
	"city" text,
	"latitude" double precision,
	"longitude" double precision,
	"device" text,
	"brand" text,
	"model" text,
	"browser" text,
	"browser_version" text,
	"os" text,
	"os_version" text,
	"utm_source" text,
	"utm_medium" text,
	"utm_campaign" text,
	"utm_term" text,
	"utm_content" text,
	"ingest_xid" bigint DEFAULT (pg_current_xact_id()::text)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "profiles" (
	"project_id" text NOT NULL,
	"id" text NOT NULL,
	"first_name" text,
	"last_name" text,
	"email" text,
	"avatar" text,
	"is_external" boolean DEFAULT false NOT NULL,
	"properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp (3) with time zone,
	CONSTRAINT "profiles_project_id_id_pk" PRIMARY KEY("project_id","id")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"name" text NOT NULL,
	"timezone" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"project_id" text NOT NULL,
	"id" text NOT NULL,
	"profile_id" text NOT NULL,
	"device_id" text NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"ended_at" timestamp (3) with time zone NOT NULL,
	"duration_ms" bigint NOT NULL,
	"event_count" integer NOT NULL,
	"screen_view_count" integer NOT NULL,
	"is_bounce" boolean NOT NULL,
	"revenue" bigint NOT NULL,
	"entry_path" text,
	"entry_origin" text,
	"exit_path" text,
	"exit_origin" text,
	"referrer" text,
	"referrer_name" text,
	"referrer_type" text,
	"utm_source" text,
	"utm_medium" text,
	"utm_campaign" text,
	"utm_term" text,
	"utm_content" text,
	"country" text,
	"region" text,
	"city" text,
	"device" text,
	"brand" text,
	"model" text,
	"browser" text,
	"browser_version" text,
	"os" text,
	"os_version" text,
	CONSTRAINT "sessions_project_id_id_pk" PRIMARY KEY("project_id","id")
);
--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_meta" ADD CONSTRAINT "event_meta_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profiles" ADD CONSTRAINT "profiles_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "clients_project_idx" ON "clients" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "events_project_time_idx" ON "events" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "events_project_session_idx" ON "events" USING btree ("project_id","session_id");--> statement-breakpoint
CREATE INDEX "events_ingest_xid_idx" ON "events" USING brin ("ingest_xid");--> statement-breakpoint
CREATE INDEX "projects_organization_idx" ON "projects" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "sessions_project_started_idx" ON "sessions" USING btree ("project_id","started_at");