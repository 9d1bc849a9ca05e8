/**
 * Creates an API client and prints its id and secret (once: only a salted hash is stored).
 *
 *   npm run client:create -- --type read|write --project <id> [--name <text>]
 *   npm run client:create -- --type root --organization <id> [--name <text>]
 *
 * Targets DATABASE_URL, else the embedded database in .data/pglite.
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { type ClientType, credentialLines, insertClient } from "./client-rows";
import { CommandInputError, runDatabaseCommand } from "./command";

const USAGE =
  "usage: npm run client:create -- --type read|write --project <id> [--name <text>]\n" +
  "       npm run client:create -- --type root --organization <id> [--name <text>]";

const CLIENT_TYPES: readonly ClientType[] = ["read", "write", "root"];

interface Request {
  type: ClientType;
  projectId: string | null;
  organizationId: string | null;
  name: string | null;
}

function isClientType(value: string): value is ClientType {
  return (CLIENT_TYPES as readonly string[]).includes(value);
}

function nonEmpty(value: string | undefined, flag: string): string | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === "") throw new CommandInputError(`${flag} must not be empty`);
  return trimmed;
}

function parseRequest(argv: string[]): Request | "help" {
  let values: { type?: string; project?: string; organization?: string; name?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        type: { type: "string", short: "t" },
        project: { type: "string", short: "p" },
        organization: { type: "string", short: "o" },
        name: { type: "string", short: "n" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    const message = (error as Error).message;
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    throw new CommandInputError(unknown ? `unknown option ${unknown[1]}` : message);
  }
  if (values.help === true) return "help";
  if (positionals.length > 0) throw new CommandInputError(`unexpected argument ${positionals[0]}`);

  const type = values.type?.trim();
  if (type === undefined) throw new CommandInputError("--type is required (read, write or root)");
  if (!isClientType(type)) throw new CommandInputError(`--type must be read, write or root, not "${type}"`);
  const projectId = nonEmpty(values.project, "--project");
  const organizationId = nonEmpty(values.organization, "--organization");
  const name = nonEmpty(values.name, "--name");

  if (type === "root") {
    if (organizationId === null) throw new CommandInputError("a root client needs --organization <id>");
    if (projectId !== null) {
      throw new CommandInputError("a root client reads every project of its organization; drop --project");
    }
  } else if (projectId === null) {
    throw new CommandInputError(`a ${type} client needs --project <id>`);
  }
  return { type, projectId, organizationId, name };
}

async function existingIds(client: pg.Client, table: "projects" | "organizations"): Promise<string> {
  const rows = await client.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id LIMIT 21`);
  if (rows.rows.length === 0) return `there are no ${table} yet (npm run seed creates the demo ones)`;
  const ids = rows.rows.slice(0, 20).map((row) => row.id);
  return `known ${table}: ${ids.join(", ")}${rows.rows.length > 20 ? ", …" : ""}`;
}

async function createClient(url: string, label: string, request: Request): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const schema = await client.query<{ ready: boolean }>(
      "SELECT to_regclass('public.clients') IS NOT NULL AND to_regclass('public.projects') IS NOT NULL AS ready",
    );
    if (schema.rows[0]?.ready !== true) {
      throw new CommandInputError(`${label} has no clients table yet: run npm run db:migrate first`, false);
    }

    let organizationId: string;
    let scope: string;
    let exampleProject = request.projectId;
    if (request.projectId !== null) {
      const project = await client.query<{ organization_id: string }>(
        "SELECT organization_id FROM projects WHERE id = $1",
        [request.projectId],
      );
      const owner = project.rows[0]?.organization_id;
      if (owner === undefined) {
        throw new CommandInputError(
          `project "${request.projectId}" does not exist; ${await existingIds(client, "projects")}`,
          false,
        );
      }
      if (request.organizationId !== null && request.organizationId !== owner) {
        throw new CommandInputError(
          `project "${request.projectId}" belongs to organization "${owner}", not "${request.organizationId}"`,
          false,
        );
      }
      organizationId = owner;
      scope = `project ${request.projectId} (organization ${owner})`;
    } else {
      organizationId = request.organizationId ?? "";
      const organization = await client.query("SELECT 1 FROM organizations WHERE id = $1", [organizationId]);
      if ((organization.rowCount ?? 0) === 0) {
        throw new CommandInputError(
          `organization "${organizationId}" does not exist; ${await existingIds(client, "organizations")}`,
          false,
        );
      }
      scope = `every project of organization ${organizationId}`;
      const first = await client.query<{ id: string }>(
        "SELECT id FROM projects WHERE organization_id = $1 ORDER BY id LIMIT 1",
        [organizationId],
      );
      exampleProject = first.rows[0]?.id ?? null;
    }

    const name = request.name ?? `${request.type} client for ${request.projectId ?? organizationId}`;
    const { id, secret } = await insertClient(client, {
      type: request.type,
      organizationId,
      projectId: request.projectId,
      name,
    });

    const example = exampleProject ?? "<projectId>";
    process.stdout.write(
      [
        `Created ${request.type} client "${name}" for ${scope}`,
        `in ${label}.`,
        "",
        ...credentialLines(id, secret),
        request.type === "write"
          ? "Note: write clients are refused (403) by every endpoint of this read API."
          : `Example: curl -H 'openpanel-client-id: ${id}' -H 'openpanel-client-secret: ${secret}' ` +
            `http://127.0.0.1:8787/insights/${example}/metrics`,
        "",
      ].join("\n"),
    );
  } finally {
    await client.end();
  }
}

runDatabaseCommand({ name: "client:create", usage: USAGE, parse: parseRequest, run: createClient });
