import { afterAll, beforeAll } from "vitest";
import { createTenant, credentialHeaders, type EventInput, insertEvents, type Tenant } from "../factories";
import type { RawEvent } from "../reference";
import { generateTraffic, type TrafficOptions } from "../traffic";
import { type ApiResponse, call, queryString, testDatabase } from "./http";

/**
 * A test file's own tenant with generated traffic: created and loaded (and the derived tables
 * refreshed) before the file's tests, its connection closed after them. `get` calls one of the
 * tenant's insights routes with its read client; `traffic()` is what the reference reads.
 */
export function useTrafficTenant(
  /** `projectTimezone`: the project's own timezone (default none, which is UTC). */
  { projectTimezone, ...options }: Omit<TrafficOptions, "projectId"> & { projectTimezone?: string },
  /** Events added to the generated ones (crafted edge cases), given the project and those. */
  extra: (projectId: string, generated: RawEvent[]) => RawEvent[] = () => [],
) {
  const database = testDatabase();
  let tenant: Tenant | undefined;
  let traffic: RawEvent[] = [];
  beforeAll(async () => {
    tenant = await createTenant(database.db, { timezone: projectTimezone });
    const generated = generateTraffic({ ...options, projectId: tenant.projectId });
    traffic = [...generated, ...extra(tenant.projectId, generated)];
    await insertEvents(database.db, traffic as EventInput[]);
  });
  afterAll(() => database.close());
  const current = (): Tenant => {
    if (!tenant) throw new Error("the tenant is created in beforeAll");
    return tenant;
  };
  return {
    database,
    tenant: current,
    traffic: () => traffic,
    projectId: () => current().projectId,
    /** GET /insights/{projectId}/{path}?{params}, repeated keys for array values. */
    get: <T = unknown>(
      path: string,
      params: Record<string, string | string[]> = {},
    ): Promise<ApiResponse<T>> =>
      call<T>(`/insights/${current().projectId}/${path}?${queryString(params)}`, {
        headers: credentialHeaders(current().read),
      }),
  };
}
