import { type Database, type DatabaseHandle, openDatabase } from "../../src/db/client";
import { clients, events, organizations, projects } from "../../src/db/schema";
import { hashSecret } from "../../src/lib/secrets";
import { drizzleStatements, refreshUntilFolded } from "./watermarks";

/**
 * Test data builders. They run in both tiers (workerd and Node) through the real driver. Every
 * call makes fresh ids, so tests never share rows and can run in any order.
 */

export function uniqueId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}`;
}

export function connect(databaseUrl: string, relayProxy: string): DatabaseHandle {
  return openDatabase({ DATABASE_URL: databaseUrl, NEON_WS_PROXY: relayProxy });
}

export async function createOrganization(db: Database): Promise<string> {
  const id = uniqueId("org");
  await db.insert(organizations).values({ id, name: `Organization ${id}` });
  return id;
}

export async function createProject(
  db: Database,
  organizationId: string,
  options: { timezone?: string | null } = {},
): Promise<string> {
  const id = uniqueId("proj");
  await db
    .insert(projects)
    .values({ id, organizationId, name: `Project ${id}`, timezone: options.timezone ?? null });
  return id;
}

export interface TestClient {
  id: string;
  secret: string;
  type: "read" | "write" | "root";
}

export async function createClient(
  db: Database,
  scope:
    | { type: "read" | "write"; organizationId: string; projectId: string }
    | { type: "root"; organizationId: string },
): Promise<TestClient> {
  const id = crypto.randomUUID();
  const secret = `secret-${crypto.randomUUID()}`;
  await db.insert(clients).values({
    id,
    name: `${scope.type} client`,
    type: scope.type,
    organizationId: scope.organizationId,
    projectId: "projectId" in scope ? scope.projectId : null,
    secretHash: await hashSecret(secret),
  });
  return { id, secret, type: scope.type };
}

/**
 * An organization with two projects and one client of each kind, plus a second organization
 * with its own project and root client: everything the access matrix needs.
 */
export interface Tenant {
  organizationId: string;
  projectId: string;
  siblingProjectId: string;
  read: TestClient;
  siblingRead: TestClient;
  write: TestClient;
  root: TestClient;
  otherOrganizationId: string;
  otherProjectId: string;
  otherRead: TestClient;
  otherRoot: TestClient;
}

export async function createTenant(db: Database, options: { timezone?: string } = {}): Promise<Tenant> {
  const organizationId = await createOrganization(db);
  const projectId = await createProject(db, organizationId, options);
  const siblingProjectId = await createProject(db, organizationId);
  const otherOrganizationId = await createOrganization(db);
  const otherProjectId = await createProject(db, otherOrganizationId);
  return {
    organizationId,
    projectId,
    siblingProjectId,
    read: await createClient(db, { type: "read", organizationId, projectId }),
    siblingRead: await createClient(db, { type: "read", organizationId, projectId: siblingProjectId }),
    write: await createClient(db, { type: "write", organizationId, projectId }),
    root: await createClient(db, { type: "root", organizationId }),
    otherOrganizationId,
    otherProjectId,
    otherRead: await createClient(db, {
      type: "read",
      organizationId: otherOrganizationId,
      projectId: otherProjectId,
    }),
    otherRoot: await createClient(db, { type: "root", organizationId: otherOrganizationId }),
  };
}

export type EventInput = Partial<typeof events.$inferInsert> & {
  projectId: string;
  sessionId: string;
  createdAt: Date;
};

/**
 * Inserts events (defaults: a screen view of `/` by device `d-<session>`), then refreshes the
 * derived tables as the cron trigger would, unless `refresh` is false: until every family holds
 * them (refreshUntilFolded), since a run leaves the events above the oldest transaction open on the
 * server (another test's, in any database) to the next one, and the catalogue behind discovery, the
 * profile summaries and the activity aggregates are read as they stand.
 */
export async function insertEvents(
  db: Database,
  rows: EventInput[],
  options: { refresh?: boolean } = {},
): Promise<void> {
  if (rows.length > 0) {
    const values = rows.map((row) => {
      const deviceId = row.deviceId ?? `d-${row.sessionId}`;
      return { name: "screen_view", path: "/", deviceId, profileId: row.profileId ?? deviceId, ...row };
    });
    for (let i = 0; i < values.length; i += 1_000) {
      await db.insert(events).values(values.slice(i, i + 1_000));
    }
  }
  if (options.refresh !== false) {
    const projectIds = [...new Set(rows.map((row) => row.projectId))];
    await refreshUntilFolded(drizzleStatements(db), [], projectIds);
  }
}

export function credentialHeaders(client: TestClient): Record<string, string> {
  return { "openpanel-client-id": client.id, "openpanel-client-secret": client.secret };
}

export function basicAuthHeaders(client: TestClient): Record<string, string> {
  return { Authorization: `Basic ${btoa(`${client.id}:${client.secret}`)}` };
}
