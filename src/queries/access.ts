import { eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { clients, projects } from "../db/schema";

export interface ClientRecord {
  id: string;
  type: "read" | "write" | "root";
  organizationId: string;
  projectId: string | null;
  secretHash: string;
}

export async function findClient(db: Database, id: string): Promise<ClientRecord | undefined> {
  const [row] = await db
    .select({
      id: clients.id,
      type: clients.type,
      organizationId: clients.organizationId,
      projectId: clients.projectId,
      secretHash: clients.secretHash,
    })
    .from(clients)
    .where(eq(clients.id, id))
    .limit(1);
  return row;
}

export interface ProjectRecord {
  id: string;
  organizationId: string;
  timezone: string | null;
}

export async function findProject(db: Database, id: string): Promise<ProjectRecord | undefined> {
  const [row] = await db
    .select({ id: projects.id, organizationId: projects.organizationId, timezone: projects.timezone })
    .from(projects)
    .where(eq(projects.id, id))
    .limit(1);
  return row;
}
