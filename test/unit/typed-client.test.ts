import { describe, expect, it } from "vitest";
import { createAnalyticsClient, serializeQuery } from "../../client";

describe("the typed client (client/index.ts)", () => {
  it("writes JSON parameters as one JSON value, lists of text as a repeated key, the rest as text", () => {
    const query = serializeQuery({
      range: "30d",
      limit: 10,
      previous: true,
      filters: [{ name: "country", operator: "is", value: ["SE"] }],
      steps: ["signup", "purchase"],
      cursor: undefined,
    });
    const parsed = new URLSearchParams(query);
    expect([...parsed.keys()]).toEqual(["range", "limit", "previous", "filters", "steps", "steps"]);
    expect(parsed.get("limit")).toBe("10");
    expect(parsed.get("previous")).toBe("true");
    expect(JSON.parse(parsed.get("filters") ?? "")).toEqual([
      { name: "country", operator: "is", value: ["SE"] },
    ]);
    expect(parsed.getAll("steps")).toEqual(["signup", "purchase"]);
  });

  it("sends the credentials as headers, never as browser credentials, to the path it types", async () => {
    const seen: Request[] = [];
    const api = createAnalyticsClient({
      baseUrl: "https://api.example/",
      clientId: "id-1",
      clientSecret: "secret-1",
      fetch: async (request) => {
        seen.push(request);
        return Response.json({ visitors: 3 });
      },
    });
    const { data } = await api.GET("/insights/{projectId}/live", {
      params: { path: { projectId: "demo" }, query: { minutes: 15 } },
    });
    expect(data).toEqual({ visitors: 3 });
    const request = seen[0];
    expect(request?.url).toBe("https://api.example/insights/demo/live?minutes=15");
    expect(request?.headers.get("openpanel-client-id")).toBe("id-1");
    expect(request?.headers.get("openpanel-client-secret")).toBe("secret-1");
    expect(request?.credentials).toBe("omit");
  });
});
