import { describe, expect, it } from "vitest";
import {
  type FunnelReferenceScope,
  referenceFunnel,
  referenceFunnelSteps,
} from "../support/analyses-reference";
import type { RawEvent } from "../support/reference";
import { expectProblem } from "../support/worker/http";
import { useTrafficTenant } from "../support/worker/traffic-tenant";

/**
 * GET /insights/{projectId}/funnel (contract A5): levels per session or profile against a
 * reference that walks each group's events by another algorithm; the edge cases the contract
 * names; every bad input a 400.
 */

const utc = (text: string) => Date.parse(text);
const WINDOW = { startDate: "2026-04-01", endDate: "2026-04-10", timezone: "UTC" };
const window = { start: utc("2026-04-01T00:00:00Z"), end: utc("2026-04-11T00:00:00Z") };

/** Crafted groups for the edges: equal timestamps, the hours limit, the window's edge, identifying mid-funnel. */
function edgeCases(projectId: string, generated: RawEvent[]): RawEvent[] {
  const base = generated[0] as RawEvent;
  const at = (text: string) => new Date(text);
  const event = (sessionId: string, profileId: string, name: string, createdAt: string): RawEvent => ({
    ...base,
    projectId,
    sessionId,
    profileId,
    deviceId: "edge-device",
    name,
    createdAt: at(createdAt),
  });
  return [
    // Same millisecond: never chains (level 1), then a later purchase does (level 2).
    event("tie", "edge-device", "signup", "2026-04-05T10:00:00.000Z"),
    event("tie", "edge-device", "purchase", "2026-04-05T10:00:00.000Z"),
    event("tie2", "edge-device", "signup", "2026-04-05T11:00:00.000Z"),
    event("tie2", "edge-device", "purchase", "2026-04-05T11:00:00.001Z"),
    // 25 hours apart: beyond a 24-hour funnel, inside a 48-hour one.
    event("slow", "slow-user", "signup", "2026-04-06T00:00:00.000Z"),
    event("slow", "slow-user", "purchase", "2026-04-07T01:00:00.000Z"),
    // The first step before the window: only the later steps count.
    event("early", "early-user", "signup", "2026-03-31T23:59:00.000Z"),
    event("early", "early-user", "purchase", "2026-04-01T00:01:00.000Z"),
    // Identifies mid-funnel: one session, two profiles.
    event("ident", "edge-device", "signup", "2026-04-08T09:00:00.000Z"),
    event("ident", "user-ident", "purchase", "2026-04-08T09:05:00.000Z"),
  ];
}

const { traffic, projectId, get } = useTrafficTenant(
  { seed: 808, sessions: 260, from: utc("2026-03-30T00:00:00Z"), to: utc("2026-04-12T00:00:00Z") },
  edgeCases,
);

type FunnelBody = {
  steps: Array<Record<string, unknown>>;
  totalUsers: number;
  completedUsers: number;
  overallConversionRate: number;
  meta: Record<string, unknown>;
};

const funnel = (params: Record<string, string | string[]>) => get<FunnelBody>("funnel", params);

const scope = (extra: Partial<FunnelReferenceScope> & { steps: string[] }): FunnelReferenceScope => ({
  projectId: projectId(),
  ...window,
  windowHours: 24,
  groupBy: "session_id",
  ...extra,
});

describe("/funnel", () => {
  it("answers every step's users, rates and drop-offs by session", async () => {
    const steps = ["screen_view", "signup", "purchase"];
    const response = await funnel({ ...WINDOW, steps });
    expect(response.status).toBe(200);
    const users = referenceFunnel(traffic(), scope({ steps }));
    expect(users[0]).toBeGreaterThan(users[2] ?? 0);
    expect(users[2]).toBeGreaterThan(0);
    const first = users[0] ?? 0;
    const last = users[2] ?? 0;
    expect(response.body).toEqual({
      steps: referenceFunnelSteps(steps, users),
      totalUsers: first,
      completedUsers: last,
      overallConversionRate: Math.round((10_000 * last) / first) / 100,
      meta: {
        startDate: "2026-04-01T00:00:00Z",
        endDate: "2026-04-10T23:59:59.999Z",
        timezone: "UTC",
        groupBy: "session_id",
        windowHours: 24,
      },
    });
  });

  it.each<[string, Record<string, string | string[]>, Partial<FunnelReferenceScope> & { steps: string[] }]>([
    [
      "by profile",
      { groupBy: "profile_id", steps: ["signup", "purchase"] },
      { groupBy: "profile_id", steps: ["signup", "purchase"] },
    ],
    [
      "a JSON array of steps",
      { steps: '["button_click","purchase"]' },
      { steps: ["button_click", "purchase"] },
    ],
    [
      "a repeated step",
      { steps: ["screen_view", "screen_view", "screen_view"] },
      { steps: ["screen_view", "screen_view", "screen_view"] },
    ],
    [
      "a 1-hour limit",
      { steps: ["screen_view", "purchase"], windowHours: "1" },
      { steps: ["screen_view", "purchase"], windowHours: 1 },
    ],
    [
      "a 48-hour limit",
      { steps: ["signup", "purchase"], windowHours: "48" },
      { steps: ["signup", "purchase"], windowHours: 48 },
    ],
    [
      "an event filter",
      { steps: ["screen_view", "purchase"], filters: '[{"name":"country","operator":"is","value":["NO"]}]' },
      { steps: ["screen_view", "purchase"], filters: [{ name: "country", operator: "is", value: ["NO"] }] },
    ],
  ])("with %s", async (_label, params, extra) => {
    const response = await funnel({ ...WINDOW, ...params });
    expect(response.status).toBe(200);
    const users = referenceFunnel(traffic(), scope(extra));
    expect(users[0]).toBeGreaterThan(0);
    expect(response.body.steps.map((step) => step.users)).toEqual(users);
    expect(response.body.steps).toEqual(referenceFunnelSteps(extra.steps, users));
  });

  it("never chains equal timestamps, honours the hours limit and the window, splits a mid-funnel identify", async () => {
    const edge = {
      startDate: "2026-04-01",
      endDate: "2026-04-10",
      timezone: "UTC",
      steps: ["signup", "purchase"],
    };
    const levels = async (params: Record<string, string | string[]>) =>
      (await funnel({ ...edge, ...params })).body.steps.map((step) => step.users);
    // Only the crafted groups carry these two names at these exact instants, so compare with the reference.
    for (const [params, extra] of [
      [{}, {}],
      [{ windowHours: "48" }, { windowHours: 48 }],
      [{ groupBy: "profile_id" }, { groupBy: "profile_id" as const }],
    ] as const) {
      expect(await levels(params)).toEqual(
        referenceFunnel(traffic(), scope({ steps: edge.steps, ...extra })),
      );
    }
    // The crafted cases on their own: a profile funnel over the identify session only.
    const only = traffic().filter((event) =>
      ["tie", "tie2", "slow", "early", "ident"].includes(event.sessionId),
    );
    expect(referenceFunnel(only, scope({ steps: edge.steps }))).toEqual([4, 2]);
    expect(referenceFunnel(only, scope({ steps: edge.steps, windowHours: 48 }))).toEqual([4, 3]);
    expect(referenceFunnel(only, scope({ steps: edge.steps, groupBy: "profile_id" }))).toEqual([2, 1]);
  });

  it("answers zeros for every step when nothing matches", async () => {
    const response = await funnel({ ...WINDOW, steps: ["never_seen", "purchase"] });
    expect(response.body).toMatchObject({ totalUsers: 0, completedUsers: 0, overallConversionRate: 0 });
    expect(response.body.steps).toEqual([
      {
        step: 1,
        eventName: "never_seen",
        users: 0,
        conversionRateFromStart: 0,
        dropoffCount: 0,
        dropoffPercent: 0,
        isHighestDropoff: false,
      },
      {
        step: 2,
        eventName: "purchase",
        users: 0,
        conversionRateFromStart: 0,
        dropoffCount: null,
        dropoffPercent: null,
        isHighestDropoff: false,
      },
    ]);
  });

  it.each([
    ["no steps", {}, "steps"],
    ["one step", { steps: "signup" }, "steps"],
    ["11 steps", { steps: Array.from({ length: 11 }, () => "a") }, "steps"],
    ["an empty step", { steps: ["signup", ""] }, "steps"],
    ["a broken JSON array", { steps: '["a",' }, "steps"],
    ["windowHours=0", { steps: ["a", "b"], windowHours: "0" }, "windowHours"],
    ["windowHours=721", { steps: ["a", "b"], windowHours: "721" }, "windowHours"],
    ["groupBy=device_id", { steps: ["a", "b"], groupBy: "device_id" }, "groupBy"],
    ["a bad filter", { steps: ["a", "b"], filters: "[1]" }, undefined],
  ])("%s is a 400", async (_label, params, path) => {
    expectProblem(await funnel({ ...WINDOW, ...params }), 400, "VALIDATION_FAILED", path);
  });
});
