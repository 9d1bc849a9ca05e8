import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, credentialHeaders, insertEvents, type Tenant } from "../support/factories";
import { call, expectProblem, testDatabase } from "../support/worker/http";

const database = testDatabase();
let tenant: Tenant;
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

beforeAll(async () => {
  tenant = await createTenant(database.db);
  const projectId = tenant.projectId;
  await insertEvents(database.db, [
    // Visitor a: two events in one session, still counted once.
    { projectId, sessionId: "a1", profileId: "a", createdAt: minutesAgo(1) },
    { projectId, sessionId: "a1", profileId: "a", createdAt: minutesAgo(2), name: "click" },
    // Visitor b: anonymous (profile = device).
    { projectId, sessionId: "b1", deviceId: "dev-b", createdAt: minutesAgo(4) },
    // Visitor c: only 10 minutes ago.
    { projectId, sessionId: "c1", profileId: "c", createdAt: minutesAgo(10) },
    // Visitor d: 59 minutes ago.
    { projectId, sessionId: "d1", profileId: "d", createdAt: minutesAgo(59) },
    // Another project's visitors never count.
    { projectId: tenant.siblingProjectId, sessionId: "x1", profileId: "x", createdAt: minutesAgo(1) },
  ]);
});
afterAll(() => database.close());

const live = (query = "") =>
  call(`/insights/${tenant.projectId}/live${query}`, { headers: credentialHeaders(tenant.read) });

describe("GET /insights/{projectId}/live", () => {
  it("counts distinct visitors of the last 5 minutes by default", async () => {
    const response = await live();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.body).toEqual({ visitors: 2 });
  });

  it("takes the window from `minutes`", async () => {
    expect((await live("?minutes=15")).body).toEqual({ visitors: 3 });
    expect((await live("?minutes=60")).body).toEqual({ visitors: 4 });
    expect((await live("?minutes=1")).body).toEqual({ visitors: 0 });
  });

  it.each(["0", "61", "abc", "1.5", "", "-3"])(
    "rejects minutes=%s with a 400 naming the parameter",
    async (value) => {
      expectProblem(await live(`?minutes=${value}`), 400, "VALIDATION_FAILED", "minutes");
    },
  );

  it("ignores unknown parameters", async () => {
    expect((await live("?utm=1&foo=bar")).body).toEqual({ visitors: 2 });
  });
});
