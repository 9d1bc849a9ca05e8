import { index, pgEnum, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** Organizations, their projects and the API clients that read them. */

export const createdAt = () =>
  timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow();

export const organizations = pgTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

/** The organization a row belongs to; its rows go with it. */
const organizationOf = () =>
  text("organization_id")
    .notNull()
    .references(() => organizations.id, { onDelete: "cascade" });

export const projects = pgTable(
  "projects",
  {
    id: text("id").primaryKey(),
    organizationId: organizationOf(),
    name: text("name").notNull(),
    /** IANA zone; null means UTC. Date-only bounds and presets resolve in it. */
    timezone: text("timezone"),
    createdAt: createdAt(),
  },
  (t) => [index("projects_organization_idx").on(t.organizationId)],
);

/** The project a row belongs to; its rows go with it. */
/** The project a row belongs to; its rows go with it. */
export const projectOf = () => text("project_id").references(() => projects.id, { onDelete: "cascade" });

export const clientType = pgEnum("client_type", ["read", "write", "root"]);

/**
 * API clients. `read`/`write` clients are scoped to one project; `root` clients to their whole
 * organization (project_id is null). Only a salted hash of the secret is stored.
 */
export const clients = pgTable(
  "clients",
  {
    id: uuid("id").primaryKey(),
    name: text("name").notNull(),
    type: clientType("type").notNull(),
    organizationId: organizationOf(),
    projectId: projectOf(),
    secretHash: text("secret_hash").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("clients_project_idx").on(t.projectId)],
);
