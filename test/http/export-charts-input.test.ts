import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, credentialHeaders, type Tenant } from "../support/factories";
import { call, expectProblem, testDatabase } from "../support/worker/http";

/**
 * `/export/charts` as a request: what /openapi.json says of its parameters, and every kind of bad
 * input answered by a 400 that names the parameter (the answers themselves: export-charts.test.ts).
 */

const database = testDatabase();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(database.db);
});
afterAll(() => database.close());

const get = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  call(`/export/charts?${new URLSearchParams(params).toString()}`, {
    headers: { ...credentialHeaders(tenant.read), "Cache-Control": "no-cache", ...headers },
  });

describe("GET /export/charts: documentation", () => {
  it("documents the parameters in /openapi.json, JSON parameters by their schemas", async () => {
    type Parameter = {
      name: string;
      schema?: { type?: string; default?: unknown };
      content?: Record<string, { schema: { $ref: string }; example?: unknown }>;
    };
    const response = await call<{
      paths: Record<string, { get?: { parameters?: Parameter[] } }>;
      components: { schemas: Record<string, { type?: string; items?: { properties?: object } }> };
    }>("/openapi.json");
    const parameters = response.body.paths["/export/charts"]?.get?.parameters ?? [];
    const byName = new Map(parameters.map((parameter) => [parameter.name, parameter]));
    for (const name of ["series", "events", "segment", "property", "breakdowns", "limit", "interval"]) {
      expect(byName.has(name), name).toBe(true);
    }
    // JSON travels as one text value; the document describes what that text holds.
    for (const [name, component] of [
      ["series", "SeriesList"],
      ["events", "SeriesList"],
      ["breakdowns", "BreakdownList"],
      ["filters", "FilterList"],
    ]) {
      const parameter = byName.get(name ?? "");
      expect(parameter?.schema, name).toBeUndefined();
      expect(parameter?.content?.["application/json"]?.schema).toEqual({
        $ref: `#/components/schemas/${component}`,
      });
      expect(Array.isArray(parameter?.content?.["application/json"]?.example), name).toBe(true);
    }
    expect(response.body.components.schemas.SeriesList?.type).toBe("array");
    expect(Object.keys(response.body.components.schemas.BreakdownList?.items?.properties ?? {})).toEqual([
      "name",
    ]);
    expect(byName.get("limit")?.schema).toMatchObject({ type: "integer", minimum: 1, default: 50 });
    expect(byName.get("previous")?.schema).toEqual({ type: "boolean", default: false });
  });
});

describe("GET /export/charts: bad input is a 400 naming the parameter", () => {
  const series = (list: unknown) => JSON.stringify(list);
  const BIG_CHART = {
    series: series([{ name: "x" }]),
    breakdowns: series([{ name: "path" }]),
    startDate: "2026-01-01",
    endDate: "2026-03-22",
    timezone: "UTC",
    interval: "hour",
  };
  const eleven = Array.from({ length: 11 }, () => ({ name: "screen_view" }));
  const CASES: Array<[string, Record<string, string>]> = [
    ["segment", { series: series([{ name: "x" }]), segment: "bogus" }],
    ["series/0/segment", { series: series([{ name: "x", segment: "visitors" }]) }],
    ["property", { series: series([{ name: "x" }]), segment: "property_sum" }],
    ["series/1/property", { series: series([{ name: "x" }, { name: "y", segment: "property_max" }]) }],
    ["property", { series: series([{ name: "x" }]), segment: "property_sum", property: "browser" }],
    ["series/0/property", { series: series([{ name: "x", property: "properties." }]) }],
    ["series", { series: series(eleven) }],
    ["series", { series: "[]" }],
    ["series", {}],
    ["series", { series: "[{name:screen_view}" }],
    ["series", { series: series({ name: "x" }) }],
    ["series/0/name", { series: series([{ name: "" }]) }],
    ["series/0/name", { series: series([{ event: "x" }]) }],
    ["events", { events: "not json" }],
    ["events", { series: series([{ name: "x" }]), events: series([{ name: "x" }]) }],
    [
      "breakdowns",
      { series: series([{ name: "x" }]), breakdowns: series([1, 2, 3, 4].map(() => ({ name: "os" }))) },
    ],
    ["breakdowns", { series: series([{ name: "x" }]), breakdowns: series([{ name: "os" }, { name: "os" }]) }],
    ["breakdowns/0/name", { series: series([{ name: "x" }]), breakdowns: series([{ name: "colour" }]) }],
    ["breakdowns", { series: series([{ name: "x" }]), breakdowns: "{" }],
    ["interval", { series: series([{ name: "x" }]), interval: "minute", range: "30d" }],
    ["interval", { series: series([{ name: "x" }]), interval: "fortnight" }],
    ["limit", { series: series([{ name: "x" }]), limit: "501" }],
    ["limit", { series: series([{ name: "x" }]), limit: "0" }],
    ["limit", { series: series([{ name: "x" }]), limit: "ten" }],
    [
      "series/0/filters/0/operator",
      { series: series([{ name: "x", filters: [{ name: "path", operator: "like", value: ["/"] }] }]) },
    ],
    [
      "series/1/filters/0/name",
      {
        series: series([
          { name: "x" },
          { name: "y", filters: [{ name: "colour", operator: "is", value: ["x"] }] },
        ]),
      },
    ],
    [
      "series/0/filters/1/value",
      {
        series: series([
          {
            name: "x",
            filters: [
              { name: "path", operator: "is", value: ["/"] },
              { name: "path", operator: "is", value: "/" },
            ],
          },
        ]),
      },
    ],
    [
      "series/0/filters/0/value",
      {
        series: series([{ name: "x", filters: [{ name: "path", operator: "regex", value: ["(unclosed"] }] }]),
      },
    ],
    ["filters/0/operator", { series: series([{ name: "x" }]), filters: '[{"name":"os","operator":"nope"}]' }],
    ["range", { series: series([{ name: "x" }]), range: "fortnight" }],
    ["endDate", { series: series([{ name: "x" }]), startDate: "2026-01-01" }],
    ["startDate", { series: series([{ name: "x" }]), startDate: "2026-03-02", endDate: "2026-03-01" }],
    ["timezone", { series: series([{ name: "x" }]), timezone: "Mars/Olympus_Mons" }],
    ["previous", { series: series([{ name: "x" }]), previous: "yes" }],
    // Answers past 100,000 points: 1 series × 52 groups × 1,944 hours (2026-01-01 to 2026-03-22).
    ["limit", { ...BIG_CHART, limit: "52" }],
    ["limit", { ...BIG_CHART, series: series([{ name: "x" }, { name: "y" }]), limit: "26" }],
    ["limit", { ...BIG_CHART, limit: "26", previous: "true" }],
  ];

  it.each(CASES)("→ %s", async (parameter, params) => {
    expectProblem(await get(params), 400, "VALIDATION_FAILED", parameter);
  });

  it("a chart of up to 100,000 points answers (51 groups × 1,944 hours = 99,144)", async () => {
    const response = await get({ ...BIG_CHART, limit: "51" });
    expect(response.status).toBe(200);
    const body = await get({ ...BIG_CHART, limit: "52" });
    expect((body.body as { detail: string }).detail).toContain("101,088 points");
  });

  it("a root client must name the project", async () => {
    const response = await get({ series: series([{ name: "x" }]) }, credentialHeaders(tenant.root));
    expectProblem(response, 400, "VALIDATION_FAILED", "projectId");
  });
});
