import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, ReadableProject } from "../env";
import { ApiError } from "../lib/errors";
import { IsolateCache } from "../lib/isolate-cache";
import { sha256Hex, verifySecret } from "../lib/secrets";
import { type ClientRecord, findClient, findProject, type ProjectRecord } from "../queries/access";
import { useDatabase } from "./database";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// One answer for every credential failure, so callers cannot probe which client ids exist.
const unauthenticated = () =>
  new ApiError({
    code: "UNAUTHENTICATED",
    detail:
      "Missing or invalid credentials. Send openpanel-client-id and openpanel-client-secret, or HTTP Basic auth.",
    headers: { "WWW-Authenticate": 'Basic realm="analytics", charset="UTF-8"' },
  });

interface Credentials {
  id: string;
  secret: string;
}

export function readCredentials(headers: Headers): Credentials | undefined {
  const id = headers.get("openpanel-client-id");
  const secret = headers.get("openpanel-client-secret");
  if (id !== null || secret !== null) {
    return id && secret ? { id: id.trim(), secret } : undefined;
  }
  const authorization = headers.get("authorization");
  const match = authorization?.match(/^Basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (!match?.[1]) return undefined;
  let decoded: string;
  try {
    decoded = atob(match[1]);
  } catch {
    return undefined;
  }
  const separator = decoded.indexOf(":");
  if (separator <= 0) return undefined;
  return { id: decoded.slice(0, separator), secret: decoded.slice(separator + 1) };
}

/**
 * Verified credentials, kept briefly in isolate memory so a burst of requests verifies once.
 * Keyed by a hash of id and secret, never by the secret itself; a rotated or deleted client
 * stops working within the TTL.
 */
const verifiedClients = new IsolateCache<ClientRecord>(30_000);

/**
 * Projects by id, kept as briefly: a cached answer then needs no database connection at all. An
 * owner or timezone change shows within the TTL. Unknown ids are remembered for 10 s, so a new
 * project answers within that.
 */
const knownProjects = new IsolateCache<ProjectRecord>(30_000);
const unknownProjects = new IsolateCache<true>(10_000);

/**
 * Credentials found wrong or unknown, remembered as briefly: a burst of bad requests (a script
 * with a stale secret, a probe) costs one database lookup, not one connection each.
 */
const rejectedCredentials = new IsolateCache<true>(10_000);

/**
 * Client ids verified in this isolate in the last 10 minutes, whatever the secret: the rate
 * limiter counts a request naming one before its credentials are checked (middleware/rate-limit.ts).
 */
const recentlyVerifiedIds = new IsolateCache<true>(600_000);

export function isRecentlyVerifiedClient(id: string): boolean {
  return recentlyVerifiedIds.get(id) === true;
}

async function verifyCredentials(c: Context<AppEnv>, credentials: Credentials): Promise<ClientRecord> {
  const key = await sha256Hex(`${credentials.id}\n${credentials.secret}`);
  const cached = verifiedClients.get(key);
  if (cached) return cached;
  if (rejectedCredentials.get(key)) throw unauthenticated();

  const found = await findClient(useDatabase(c), credentials.id.toLowerCase());
  if (!found || !(await verifySecret(credentials.secret, found.secretHash))) {
    rejectedCredentials.set(key, true);
    throw unauthenticated();
  }
  verifiedClients.set(key, found);
  recentlyVerifiedIds.set(found.id, true);
  return found;
}

/** Authenticates the caller (contract section 1) and refuses `write` clients. */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const credentials = readCredentials(c.req.raw.headers);
  if (!credentials || !UUID.test(credentials.id)) throw unauthenticated();
  const client = await verifyCredentials(c, credentials);
  if (client.type === "write") {
    throw new ApiError({
      code: "CLIENT_TYPE_FORBIDDEN",
      detail: "Write clients cannot read data. Use a read or root client.",
    });
  }
  c.set("client", {
    id: client.id,
    type: client.type,
    organizationId: client.organizationId,
    projectId: client.projectId,
  });
  await next();
};

/**
 * Loads a project the authenticated client may read. A missing project and one the client may
 * not read get the same 404, so project ids cannot be probed either.
 */
export async function authorizeProject(c: Context<AppEnv>, projectId: string): Promise<ReadableProject> {
  const client = c.get("client");
  const notFound = new ApiError({
    code: "PROJECT_NOT_FOUND",
    detail: `Project "${projectId}" was not found.`,
  });
  if (client.type === "read" && client.projectId !== projectId) throw notFound;
  let project = knownProjects.get(projectId);
  if (!project && !unknownProjects.get(projectId)) {
    project = await findProject(useDatabase(c), projectId);
    if (project) knownProjects.set(projectId, project);
    else unknownProjects.set(projectId, true);
  }
  if (!project || project.organizationId !== client.organizationId) throw notFound;
  const readable = {
    id: project.id,
    organizationId: project.organizationId,
    timezone: project.timezone ?? "UTC",
    firstEventAt: project.firstEventAt,
  };
  c.set("project", readable);
  return readable;
}
