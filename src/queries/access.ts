import { asc, eq, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { clients, events, projects } from "../db/schema";

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
  /** Epoch ms of the project's first event; null without events. */
  firstEventAt: number | null;
}

/** A project and when its history starts (the first row of the events' time index, not a scan). */
export async function findProject(db: Database, id: string): Promise<ProjectRecord | undefined> {
  const firstEvent = db
    .select({ at: sql`floor(extract(epoch from ${events.createdAt}) * 1000)::float8` })
    .from(events)
    .where(eq(events.projectId, projects.id))
    .orderBy(asc(events.createdAt))
    .limit(1);
  const [row] = await db
    .select({
      id: projects.id,
      organizationId: projects.organizationId,
      timezone: projects.timezone,
      firstEventAt: sql<number | null>`(${firstEvent})`,
    })
    .from(projects)
    .where(eq(projects.id, id))
    .limit(1);
  return row && { ...row, firstEventAt: row.firstEventAt === null ? null : Number(row.firstEventAt) };
}
