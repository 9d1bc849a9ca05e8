import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { eq } from "drizzle-orm";
import { afterAll, describe, expect, inject, it } from "vitest";
import { clients, organizations, projects } from "../../src/db/schema";
import { verifySecret } from "../../src/lib/secrets";
import { testDatabase } from "../support/node/database";

/**
 * `npm run project:create` (scripts/db/create-project.ts) against the test database: a project,
 * its new organization and a read client whose printed secret verifies; bad input and an id
 * taken exit 1 with the reason and create nothing.
 */

const database = testDatabase();
afterAll(() => database.close());

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

async function createProject(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      path.join(ROOT, "node_modules/.bin/tsx"),
      [path.join(ROOT, "scripts/db/create-project.ts"), ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: inject("databaseUrl") } },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const suffix = crypto.randomUUID().slice(0, 8);

describe("project:create", () => {
  it("creates the project, its organization and a read client whose secret verifies", async () => {
    const result = await createProject("--name", `Acme Web ${suffix}`, "--timezone", "Europe/Oslo");
    expect(result.code).toBe(0);
    const projectId = `acme-web-${suffix}`;
    const [project] = await database.db.select().from(projects).where(eq(projects.id, projectId));
    expect(project).toMatchObject({
      name: `Acme Web ${suffix}`,
      timezone: "Europe/Oslo",
      organizationId: `org-${projectId}`,
    });
    const [organization] = await database.db
      .select()
      .from(organizations)
      .where(eq(organizations.id, `org-${projectId}`));
    expect(organization?.name).toBe(`Acme Web ${suffix}`);
    const id = /client id: +(\S+)/.exec(result.stdout)?.[1];
    const secret = /client secret: +(\S+)/.exec(result.stdout)?.[1];
    const [client] = await database.db
      .select()
      .from(clients)
      .where(eq(clients.id, id ?? ""));
    expect(client).toMatchObject({ type: "read", projectId, organizationId: `org-${projectId}` });
    expect(await verifySecret(secret ?? "", client?.secretHash ?? "")).toBe(true);
    expect(result.stdout).toContain(`/insights/${projectId}/metrics`);
  });

  it("adds a project to an existing organization, without a client when asked", async () => {
    const result = await createProject(
      "--name",
      "Shop",
      "--id",
      `shop-${suffix}`,
      "--organization",
      `org-acme-web-${suffix}`,
      "--no-client",
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("existing organization");
    expect(result.stdout).not.toContain("client id");
    const [project] = await database.db
      .select()
      .from(projects)
      .where(eq(projects.id, `shop-${suffix}`));
    expect(project).toMatchObject({ organizationId: `org-acme-web-${suffix}`, timezone: null });
  });

  it.each([
    ["no name", [], "--name is required", undefined],
    [
      "an unknown timezone",
      ["--name", `Bad ${suffix}`, "--timezone", "Mars/Olympus"],
      "not an IANA time zone",
      `bad-${suffix}`,
    ],
    [
      "an id with spaces",
      ["--name", `Spaced ${suffix}`, "--id", "a b"],
      "must be 1–64 letters",
      `spaced-${suffix}`,
    ],
    ["an unknown option", ["--name", `Odd ${suffix}`, "--colour", "red"], "Unknown option", `odd-${suffix}`],
    ["an id taken", ["--name", "Other", "--id", `shop-${suffix}`], "already exists", `shop-${suffix}`],
  ])(
    "%s exits 1 with the reason and creates nothing",
    async (_label, args, reason, projectId) => {
      const result = await createProject(...args);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(reason);
      expect(result.stderr).toContain("usage: npm run project:create");
      if (projectId !== undefined) {
        // Nothing new under that id (the taken one keeps its first name).
        const rows = await database.db.select().from(projects).where(eq(projects.id, projectId));
        expect(rows.map((row) => row.name)).toEqual(projectId.startsWith("shop-") ? ["Shop"] : []);
      }
    },
    60_000,
  );
});
