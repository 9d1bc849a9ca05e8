import type pg from "pg";
import { hashSecret, verifySecret } from "../../src/lib/secrets";

/**
 * The demo organizations, projects and API clients (CONTRACT section 11). The seed creates them;
 * migrations never do. Secrets are public demo values and are stored only as salted hashes.
 */

export type DemoClientType = "read" | "write" | "root";

export interface DemoClient {
  id: string;
  type: DemoClientType;
  organizationId: string;
  projectId: string | null;
  secret: string;
  name: string;
}

export interface DemoOrganization {
  id: string;
  name: string;
}

export interface DemoProject {
  id: string;
  organizationId: string;
  name: string;
  /** IANA zone; null means UTC. */
  timezone: string | null;
}

export const DEMO_ORGANIZATIONS: ReadonlyArray<DemoOrganization> = [
  { id: "demo-org", name: "Demo Organization" },
  { id: "other-org", name: "Other Organization" },
];

export const DEMO_PROJECTS: ReadonlyArray<DemoProject> = [
  { id: "demo", organizationId: "demo-org", name: "Demo", timezone: "UTC" },
  { id: "demo-2", organizationId: "demo-org", name: "Demo 2", timezone: null },
  { id: "other", organizationId: "other-org", name: "Other", timezone: null },
];

export const DEMO_CLIENTS: ReadonlyArray<DemoClient> = [
  {
    id: "5f1b8d1e-0000-4000-8000-000000000001",
    type: "read",
    organizationId: "demo-org",
    projectId: "demo",
    secret: "demo-read-secret",
    name: "Demo read client",
  },
  {
    id: "5f1b8d1e-0000-4000-8000-000000000002",
    type: "root",
    organizationId: "demo-org",
    projectId: null,
    secret: "demo-root-secret",
    name: "Demo root client",
  },
  {
    id: "5f1b8d1e-0000-4000-8000-000000000003",
    type: "write",
    organizationId: "demo-org",
    projectId: "demo",
    secret: "demo-write-secret",
    name: "Demo write client",
  },
  {
    id: "5f1b8d1e-0000-4000-8000-000000000004",
    type: "read",
    organizationId: "other-org",
    projectId: "other",
    secret: "other-read-secret",
    name: "Other read client",
  },
];

/** The read client of the `demo` project: what `npm run dev` opens the dashboard with. */
export const DEMO_READ_CLIENT: DemoClient = (() => {
  const read = DEMO_CLIENTS.find((demo) => demo.type === "read" && demo.projectId === "demo");
  if (!read) throw new Error("the demo fixtures have no read client of the demo project");
  return read;
})();

/**
 * Upserts the demo organizations, projects and clients. Idempotent: a client's stored hash is kept
 * when it still verifies the demo secret, so rerunning changes no rows.
 */
export async function ensureDemoFixtures(client: pg.ClientBase): Promise<void> {
  for (const org of DEMO_ORGANIZATIONS) {
    await client.query(
      `INSERT INTO organizations (id, name) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE organizations.name IS DISTINCT FROM excluded.name`,
      [org.id, org.name],
    );
  }
  for (const project of DEMO_PROJECTS) {
    await client.query(
      `INSERT INTO projects (id, organization_id, name, timezone) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name,
         timezone = excluded.timezone
       WHERE (projects.organization_id, projects.name, projects.timezone)
         IS DISTINCT FROM (excluded.organization_id, excluded.name, excluded.timezone)`,
      [project.id, project.organizationId, project.name, project.timezone],
    );
  }
  const existing = await client.query<{ id: string; secret_hash: string }>(
    "SELECT id::text AS id, secret_hash FROM clients WHERE id = ANY($1::uuid[])",
    [DEMO_CLIENTS.map((c) => c.id)],
  );
  const stored = new Map(existing.rows.map((row) => [row.id, row.secret_hash]));
  for (const demo of DEMO_CLIENTS) {
    const current = stored.get(demo.id);
    const secretHash =
      current !== undefined && (await verifySecret(demo.secret, current))
        ? current
        : await hashSecret(demo.secret);
    await client.query(
      `INSERT INTO clients (id, name, type, organization_id, project_id, secret_hash)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type,
         organization_id = excluded.organization_id, project_id = excluded.project_id,
         secret_hash = excluded.secret_hash
       WHERE (clients.name, clients.type, clients.organization_id, clients.project_id, clients.secret_hash)
         IS DISTINCT FROM (excluded.name, excluded.type, excluded.organization_id, excluded.project_id,
           excluded.secret_hash)`,
      [demo.id, demo.name, demo.type, demo.organizationId, demo.projectId, secretHash],
    );
  }
}

/** True when the `demo` project exists (false too when the schema is not migrated yet). */
export async function hasDemoProject(client: pg.ClientBase): Promise<boolean> {
  const table = await client.query<{ exists: boolean }>(
    "SELECT to_regclass('public.projects') IS NOT NULL AS exists",
  );
  if (table.rows[0]?.exists !== true) return false;
  const result = await client.query("SELECT 1 FROM projects WHERE id = 'demo'");
  return (result.rowCount ?? 0) > 0;
}
