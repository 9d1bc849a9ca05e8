import { describe, expect, it } from "vitest";
import { type FlowReferenceScope, referenceUserFlow } from "../support/analyses-reference";
import { expectProblem } from "../support/worker/http";
import { useTrafficTenant } from "../support/worker/traffic-tenant";

/**
 * GET /insights/{projectId}/user_flow (contract A7): nodes, links and totals against a reference
 * that builds each session's path step by step from the raw events; every mode, include/exclude,
 * paths, maxLabels; every bad input a 400.
 */

const utc = (text: string) => Date.parse(text);
const { traffic, projectId, get } = useTrafficTenant({
  seed: 321,
  sessions: 400,
  from: utc("2026-02-01T00:00:00Z"),
  to: utc("2026-02-10T00:00:00Z"),
});
const WINDOW = { startDate: "2026-02-02", endDate: "2026-02-08", timezone: "UTC" };
const window = { start: utc("2026-02-02T00:00:00Z"), end: utc("2026-02-09T00:00:00Z") };

const scope = (
  extra: Partial<FlowReferenceScope> & Pick<FlowReferenceScope, "startEvent">,
): FlowReferenceScope => ({
  projectId: projectId(),
  ...window,
  mode: "after",
  steps: 5,
  maxLabels: 20,
  ...extra,
});

describe("/user_flow", () => {
  it.each<
    [
      string,
      Record<string, string | string[]>,
      Partial<FlowReferenceScope> & Pick<FlowReferenceScope, "startEvent">,
    ]
  >([
    ["after a name", { startEvent: "screen_view" }, { startEvent: "screen_view" }],
    [
      "after a path, 3 steps",
      { startEvent: "/pricing", paths: "true", steps: "3" },
      { startEvent: "/pricing", paths: true, steps: 3 },
    ],
    ["before a name", { startEvent: "purchase", mode: "before" }, { startEvent: "purchase", mode: "before" }],
    [
      "between two names, 3 steps",
      { startEvent: "screen_view", endEvent: "purchase", mode: "between", steps: "3" },
      { startEvent: "screen_view", endEvent: "purchase", mode: "between", steps: 3 },
    ],
    [
      "including one label",
      { startEvent: "/", paths: "true", include: ["signup"] },
      { startEvent: "/", paths: true, include: ["signup"] },
    ],
    [
      "excluding two labels",
      { startEvent: "screen_view", exclude: '["button_click","signup"]' },
      { startEvent: "screen_view", exclude: ["button_click", "signup"] },
    ],
    [
      "at most 3 labels",
      { startEvent: "/", paths: "true", maxLabels: "3" },
      { startEvent: "/", paths: true, maxLabels: 3 },
    ],
    [
      "an event filter",
      { startEvent: "screen_view", filters: '[{"name":"country","operator":"is","value":["NO"]}]' },
      { startEvent: "screen_view", filters: [{ name: "country", operator: "is", value: ["NO"] }] },
    ],
  ])("%s", async (_label, params, extra) => {
    const response = await get<Record<string, unknown>>("user_flow", { ...WINDOW, ...params });
    expect(response.status).toBe(200);
    const expected = referenceUserFlow(traffic(), scope(extra));
    expect(expected.totalSessions).toBeGreaterThan(3);
    const { meta, ...body } = response.body;
    expect(body).toEqual(expected);
    expect(meta).toMatchObject({ timezone: "UTC" });
  });

  it("counts between-cuts longer than steps as skipped, and puts (other) past maxLabels", async () => {
    const params = {
      startEvent: "/",
      endEvent: "/cart",
      mode: "between",
      paths: "true",
      steps: "2",
      maxLabels: "1",
    };
    const response = await get<Record<string, unknown>>("user_flow", { ...WINDOW, ...params });
    const expected = referenceUserFlow(
      traffic(),
      scope({ startEvent: "/", endEvent: "/cart", mode: "between", paths: true, steps: 2, maxLabels: 1 }),
    );
    expect(expected.skippedSessions).toBeGreaterThan(0);
    expect(expected.nodes.some((node) => node.label === "(other)")).toBe(true);
    const { meta: _meta, ...body } = response.body;
    expect(body).toEqual(expected);
  });

  it.each([
    ["no startEvent", {}, "startEvent"],
    ["between without endEvent", { startEvent: "a", mode: "between" }, "endEvent"],
    ["mode=around", { startEvent: "a", mode: "around" }, "mode"],
    ["steps=1", { startEvent: "a", steps: "1" }, "steps"],
    ["steps=11", { startEvent: "a", steps: "11" }, "steps"],
    ["maxLabels=51", { startEvent: "a", maxLabels: "51" }, "maxLabels"],
    ["paths=yes", { startEvent: "a", paths: "yes" }, "paths"],
  ])("%s is a 400", async (_label, params, path) => {
    expectProblem(await get("user_flow", { ...WINDOW, ...params }), 400, "VALIDATION_FAILED", path);
  });
});
