import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clients } from "../../src/db/schema";
import { hashSecret } from "../../src/lib/secrets";
import { createTenant, credentialHeaders, insertEvents, type Tenant } from "../support/factories";
import { cursorText, signedCursor } from "../support/worker/cursors";
import { call, expectProblem, testDatabase } from "../support/worker/http";

// Inputs that reached Postgres and failed there (500 INTERNAL) before they were refused up front.
// Each must be a 400 problem+json naming the parameter, with nothing of the database in it.

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
});
afterAll(() => database.close());

const NUL = "\u0000";
const json = (value: unknown) => encodeURIComponent(JSON.stringify(value));

async function expectRefused(path: string, parameter: string): Promise<void> {
  const response = await call(path, { headers: credentialHeaders(tenant.read) });
  expectProblem(response, 400, "VALIDATION_FAILED", parameter);
  expect(JSON.stringify(response.body)).not.toMatch(/select|postgres|22021|invalid byte sequence|stack/i);
}

describe("a NUL character (U+0000) anywhere in the request", () => {
  const project = () => tenant.projectId;
  const nulFilter = json([{ name: "path", operator: "is", value: [`/a${NUL}`] }]);

  it.each([
    ["the project id of the path", () => `/insights/${project()}%00/metrics`, "path"],
    ["the dimension of the path", () => `/insights/${project()}/coun%00try`, "path"],
    ["a query value", () => `/insights/${project()}/metrics?timezone=UTC%00`, "query"],
    ["the export's profileId", () => `/export/events?projectId=${project()}&profileId=p%00`, "query"],
    ["the export's event", () => `/export/events?projectId=${project()}&event=a%00b`, "query"],
    ["the export's projectId", () => `/export/events?projectId=${project()}%00`, "query"],
    [
      "a value of a JSON filter, escaped",
      () => `/insights/${project()}/metrics?filters=${nulFilter}`,
      "filters/0/value/0",
    ],
    [
      "a filter's field name, escaped",
      () =>
        `/insights/${project()}/pages?filters=${json([{ name: `properties.a${NUL}`, operator: "is", value: ["x"] }])}`,
      "filters/0/name",
    ],
    [
      "a regex pattern, escaped",
      () =>
        `/export/events?projectId=${project()}&filters=${json([{ name: "path", operator: "regex", value: [`a${NUL}`] }])}`,
      "filters/0/value/0",
    ],
    [
      "a chart series' event name, escaped",
      () => `/export/charts?projectId=${project()}&series=${json([{ name: `view${NUL}` }])}`,
      "series/0/name",
    ],
    [
      "a chart breakdown, escaped",
      () =>
        `/export/charts?projectId=${project()}&series=${json([{ name: "*" }])}&breakdowns=${json([{ name: `properties.p${NUL}` }])}`,
      "breakdowns/0/name",
    ],
  ])("is a 400 in %s", async (_, path, parameter) => {
    await expectRefused(path(), parameter);
  });
});

describe("dates outside the years 1–9999 (UTC)", () => {
  it.each([
    [
      "an end on 9999-12-31 (its exclusive end is in year 10000)",
      "startDate=9999-12-01&endDate=9999-12-31",
      "endDate",
    ],
    [
      "a start on year 1 east of UTC",
      "startDate=0001-01-01&endDate=0001-01-05&timezone=Asia/Tokyo",
      "startDate",
    ],
    ["a previous period before year 1", "startDate=0001-01-01&endDate=0001-01-05&previous=true", "previous"],
  ])("are a 400 on /metrics: %s", async (_, query, parameter) => {
    await expectRefused(`/insights/${tenant.projectId}/metrics?${query}`, parameter);
  });

  it("are a 400 on /export/events and /export/charts", async () => {
    await expectRefused(
      `/export/events?projectId=${tenant.projectId}&start=9999-12-01&end=9999-12-31`,
      "end",
    );
    await expectRefused(
      `/export/charts?projectId=${tenant.projectId}&series=${json([{ name: "*" }])}&startDate=9999-12-01&endDate=9999-12-31`,
      "endDate",
    );
  });

  it("still answer inside them: the earliest and the latest whole days", async () => {
    for (const query of [
      "startDate=0001-01-01&endDate=0001-01-02",
      "startDate=9999-12-29&endDate=9999-12-30",
    ]) {
      const response = await call(`/insights/${tenant.projectId}/metrics?${query}`, {
        headers: credentialHeaders(tenant.read),
      });
      expect(response.status).toBe(200);
    }
  });
});

describe("a forged insights cursor", () => {
  /** A real next-page cursor of the country list (two countries, one per page). */
  async function issuedCursor(path: string): Promise<string> {
    const response = await call(path, { headers: credentialHeaders(tenant.read) });
    expect(response.status).toBe(200);
    const cursor = response.headers.get("x-next-cursor");
    expect(cursor).toBeTruthy();
    return cursor ?? "";
  }
  const list = () => `/insights/${tenant.projectId}/country?limit=1&startDate=2026-01-01&endDate=2026-01-31`;

  beforeAll(async () => {
    await insertEvents(
      database.db,
      ["NO", "SE"].map((country, index) => ({
        projectId: tenant.projectId,
        sessionId: `cursor-${index}`,
        country,
        createdAt: new Date(`2026-01-1${index}T12:00:00Z`),
      })),
    );
  });

  it("is honoured as issued", async () => {
    const cursor = await issuedCursor(list());
    const next = await call(`${list()}&cursor=${cursor}`, { headers: credentialHeaders(tenant.read) });
    expect(next.status).toBe(200);
    expect(next.body).toHaveLength(1);
  });

  it("with its offset edited is a 400 (the MAC no longer matches), not a query", async () => {
    const issued = await issuedCursor(list());
    const payload = JSON.parse(cursorText(issued)) as { o: number; q: string };
    const edited = btoa(JSON.stringify({ ...payload, o: 0 })).replace(/=+$/, "");
    await expectRefused(`${list()}&cursor=${edited}.${issued.split(".")[1]}`, "cursor");
    await expectRefused(`${list()}&cursor=${btoa(JSON.stringify(payload)).replace(/=+$/, "")}`, "cursor");
  });

  it("signed with the right key but an offset past the safe integers is a 400, not a bigint parse", async () => {
    const issued = await issuedCursor(list());
    const payload = JSON.parse(cursorText(issued)) as { o: number; q: string };
    const cursor = await signedCursor("offset", `{"o":1e21,"q":"${payload.q}"}`);
    await expectRefused(`${list()}&cursor=${cursor}`, "cursor");
  });

  it("signed with another key is a 400", async () => {
    const issued = await issuedCursor(list());
    const cursor = await signedCursor("offset", cursorText(issued), "another deployment's secret");
    await expectRefused(`${list()}&cursor=${cursor}`, "cursor");
  });
});

describe("sizes", () => {
  it("a URL longer than 8,192 characters is a 414 problem, before authentication", async () => {
    const value = "x".repeat(8_200);
    const response = await call(`/insights/${tenant.projectId}/metrics?filters=${value}`);
    expectProblem(response, 414, "URI_TOO_LONG");
    expect((response.body as { detail: string }).detail).toContain("8192");
  });

  it("a URL just under it is read as usual (here a 400 for its bad filters, not a 414)", async () => {
    const path = `/insights/${tenant.projectId}/metrics?filters=`;
    const response = await call(`${path}${"x".repeat(8_000 - path.length)}`, {
      headers: credentialHeaders(tenant.read),
    });
    expectProblem(response, 400, "VALIDATION_FAILED", "filters");
  });

  it("a catastrophic-looking regex runs under the statement timeout and answers", async () => {
    const filters = json([{ name: "path", operator: "regex", value: ["^(a+)+$", "(a|a)*b", "(.*a){12}"] }]);
    const response = await call(`/insights/${tenant.projectId}/metrics?filters=${filters}`, {
      headers: credentialHeaders(tenant.read),
    });
    expect(response.status).toBe(200);
  });
});

describe("repeated bad credentials", () => {
  it("are remembered for 10 s: a pair found unknown stays refused without another lookup", async () => {
    const id = crypto.randomUUID();
    const secret = `secret-${crypto.randomUUID()}`;
    const headers = credentialHeaders({ id, secret, type: "read" });
    expectProblem(await call(`/insights/${tenant.projectId}/live`, { headers }), 401, "UNAUTHENTICATED");
    // The client now exists, but this isolate remembers the pair as unknown for a while.
    await database.db.insert(clients).values({
      id,
      name: "late client",
      type: "read",
      organizationId: tenant.organizationId,
      projectId: tenant.projectId,
      secretHash: await hashSecret(secret),
    });
    expectProblem(await call(`/insights/${tenant.projectId}/live`, { headers }), 401, "UNAUTHENTICATED");
    // Another pair is looked up as usual.
    const known = await call(`/insights/${tenant.projectId}/live`, {
      headers: credentialHeaders(tenant.read),
    });
    expect(known.status).toBe(200);
  });
});
