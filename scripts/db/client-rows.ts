import { randomUUID } from "node:crypto";
import type pg from "pg";
import { generateSecret, hashSecret } from "../../src/lib/secrets";

export type ClientType = "read" | "write" | "root";

/**
 * Inserts an API client and returns its id and secret: the secret exists only here and in the
 * caller's output, the table keeps a salted hash (client:create, project:create).
 */
export async function insertClient(
  client: pg.Client,
  row: { type: ClientType; organizationId: string; projectId: string | null; name: string },
): Promise<{ id: string; secret: string }> {
  const id = randomUUID();
  const secret = generateSecret();
  await client.query(
    `INSERT INTO clients (id, name, type, organization_id, project_id, secret_hash)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [id, row.name, row.type, row.organizationId, row.projectId, await hashSecret(secret)],
  );
  return { id, secret };
}

/** The lines that hand a new client's credentials over, once. */
export function credentialLines(id: string, secret: string): string[] {
  return [
    `  client id:     ${id}`,
    `  client secret: ${secret}`,
    "",
    "The secret cannot be shown again (only a salted hash of it is stored): keep it now.",
  ];
}
