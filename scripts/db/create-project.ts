/**
 * Creates a project (and its organization when absent) and a first read client for it, so an
 * operator gets from an empty, migrated database to working credentials with one command.
 *
 *   npm run project:create -- --name <text> [--id <project id>] [--timezone <IANA zone>]
 *                             [--organization <id>] [--no-client]
 *
 * The project id defaults to the name in lower case with dashes; without --organization a new
 * organization named after the project is created. Targets DATABASE_URL, else the embedded
 * database in .data/pglite.
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { credentialLines, insertClient } from "./client-rows";
import { CommandInputError, runDatabaseCommand } from "./command";

const USAGE =
  "usage: npm run project:create -- --name <text> [--id <project id>] [--timezone <IANA zone>]\n" +
  "                                 [--organization <id>] [--no-client]";

interface ProjectRequest {
  name: string;
  id: string;
  timezone: string | null;
  organizationId: string | null;
  withClient: boolean;
}

/** An id from a name: lower case, runs of anything but letters and digits as one dash. */
function idFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function parseRequest(argv: string[]): ProjectRequest | "help" {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        name: { type: "string", short: "n" },
        id: { type: "string" },
        timezone: { type: "string", short: "z" },
        organization: { type: "string", short: "o" },
        "no-client": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new CommandInputError((error as Error).message);
  }
  if (values.help === true) return "help";
  const name = String(values.name ?? "").trim();
  if (name === "") throw new CommandInputError("--name is required");
  const id = (typeof values.id === "string" ? values.id.trim() : idFromName(name)) || "";
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(id)) {
    throw new CommandInputError(
      `the project id "${id}" must be 1–64 letters, digits, '.', '_' or '-' (give one with --id)`,
    );
  }
  const timezone = typeof values.timezone === "string" ? values.timezone.trim() : null;
  if (timezone !== null && !validTimeZone(timezone)) {
    throw new CommandInputError(`--timezone "${timezone}" is not an IANA time zone (e.g. Europe/Oslo)`);
  }
  const organizationId = typeof values.organization === "string" ? values.organization.trim() || null : null;
  return { name, id, timezone, organizationId, withClient: values["no-client"] !== true };
}

async function createProject(url: string, label: string, request: ProjectRequest): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const schema = await client.query<{ ready: boolean }>(
      "SELECT to_regclass('public.projects') IS NOT NULL AND to_regclass('public.clients') IS NOT NULL AS ready",
    );
    if (schema.rows[0]?.ready !== true) {
      throw new CommandInputError(`${label} has no projects table yet: run npm run db:migrate first`);
    }
    await client.query("BEGIN");
    const taken = await client.query("SELECT 1 FROM projects WHERE id = $1", [request.id]);
    if ((taken.rowCount ?? 0) > 0) throw new CommandInputError(`project "${request.id}" already exists`);
    const organizationId = request.organizationId ?? `org-${request.id}`;
    const organization = await client.query(
      "INSERT INTO organizations (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
      [organizationId, request.organizationId ?? request.name],
    );
    await client.query("INSERT INTO projects (id, organization_id, name, timezone) VALUES ($1, $2, $3, $4)", [
      request.id,
      organizationId,
      request.name,
      request.timezone,
    ]);
    const credentials = request.withClient
      ? await insertClient(client, {
          type: "read",
          organizationId,
          projectId: request.id,
          name: `read client for ${request.id}`,
        })
      : undefined;
    await client.query("COMMIT");
    const lines = [
      `Created project "${request.id}" (${request.name}, ${request.timezone ?? "UTC"}) in ${
        (organization.rowCount ?? 0) > 0 ? "new" : "existing"
      } organization "${organizationId}", in ${label}.`,
    ];
    if (credentials) {
      lines.push(
        "",
        "Its read client:",
        ...credentialLines(credentials.id, credentials.secret),
        `Example: curl -H 'openpanel-client-id: ${credentials.id}' -H 'openpanel-client-secret: ${credentials.secret}' ` +
          `http://127.0.0.1:8787/insights/${request.id}/metrics`,
      );
    }
    process.stdout.write(`${lines.join("\n")}\n`);
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}

runDatabaseCommand({ name: "project:create", usage: USAGE, parse: parseRequest, run: createProject });
