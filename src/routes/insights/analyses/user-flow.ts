import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { byteOrder } from "../../../lib/byte-order";
import { percentOf } from "../../../lib/decimal";
import { ApiError } from "../../../lib/errors";
import { validate } from "../../../middleware/validate";
import { FLOW_MODES, type FlowCounts, flowCounts } from "../../../queries/analyses/user-flow";
import { type UserFlowResponse, UserFlowResponseSchema } from "../../../schemas/analyses";
import { cachedAnswerResponses } from "../../openapi";
import { FlagParam, OneOfParam, RangeParams, StringListParam, WholeNumberParam } from "../../params";
import { answerObject } from "../object-answer";
import { resolveInsightsScope } from "../scope";

const UserFlowQuery = v.object({
  ...RangeParams,
  startEvent: v.nonOptional(
    v.pipe(v.string(), v.minLength(1, "startEvent must not be empty"), v.description("The anchor label.")),
    "startEvent is required",
  ),
  endEvent: v.optional(v.pipe(v.string(), v.description("The end label; required with `mode=between`."))),
  mode: v.optional(OneOfParam("mode", FLOW_MODES, "Which way from the anchor (default `after`)."), "after"),
  steps: v.optional(
    v.pipe(
      WholeNumberParam("steps", 10, "Labels per path, 2–10 (default 5)."),
      v.minValue(2, "steps must be from 2 to 10"),
    ),
    "5",
  ),
  include: v.optional(
    StringListParam("include", "Labels kept (with the start and end labels); wins over exclude."),
  ),
  exclude: v.optional(StringListParam("exclude", "Labels dropped.")),
  paths: v.optional(FlagParam("paths", "Label a screen view by its path (default `false`)."), "false"),
  maxLabels: v.optional(
    WholeNumberParam(
      "maxLabels",
      50,
      "Distinct labels shown, the most frequent; the rest are `(other)` (1–50, default 20).",
    ),
    "20",
  ),
});

const PALETTE = [
  "#2563eb",
  "#16a34a",
  "#f59e0b",
  "#dc2626",
  "#7c3aed",
  "#0891b2",
  "#db2777",
  "#65a30d",
  "#ea580c",
  "#4b5563",
];
const OTHER = "(other)";
const OTHER_COLOR = "#9ca3af";

/** The graph from the counts (contract A7): labels past maxLabels become `(other)`, nodes and links sorted. */
function flowGraph(counts: FlowCounts, maxLabels: number) {
  const ranked = [...counts.labels].sort((a, b) => b.sessions - a.sessions || byteOrder(a.label, b.label));
  const shown = new Set(ranked.slice(0, maxLabels).map((row) => row.label));
  const colors = new Map(
    ranked.slice(0, maxLabels).map((row, index) => [row.label, PALETTE[index % PALETTE.length] ?? ""]),
  );
  const labelOf = (label: string) => (shown.has(label) ? label : OTHER);
  const nodeId = (label: string, step: number) => `${label}::step${step}`;
  const nodeValues = new Map<string, { label: string; step: number; value: number }>();
  for (const node of counts.nodes) {
    const label = labelOf(node.label);
    const id = nodeId(label, node.step);
    const entry = nodeValues.get(id) ?? { label, step: node.step, value: 0 };
    entry.value += node.sessions;
    nodeValues.set(id, entry);
  }
  const linkValues = new Map<string, { source: string; target: string; step: number; value: number }>();
  for (const link of counts.links) {
    const source = nodeId(labelOf(link.from), link.step);
    const target = nodeId(labelOf(link.to), link.step + 1);
    const key = `${source}\u0000${target}`;
    const entry = linkValues.get(key) ?? { source, target, step: link.step, value: 0 };
    entry.value += link.sessions;
    linkValues.set(key, entry);
  }
  const nodes = [...nodeValues.entries()]
    .map(([id, node]) => ({
      id,
      label: node.label,
      nodeColor: colors.get(node.label) ?? OTHER_COLOR,
      percentage: percentOf(node.value, counts.totalSessions),
      value: node.value,
      step: node.step,
    }))
    .sort((a, b) => a.step - b.step || b.value - a.value || byteOrder(a.label, b.label));
  const links = [...linkValues.values()]
    .sort(
      (a, b) =>
        a.step - b.step ||
        b.value - a.value ||
        byteOrder(a.source, b.source) ||
        byteOrder(a.target, b.target),
    )
    .map(({ source, target, value }) => ({ source, target, value }));
  return { nodes, links };
}

export const userFlowRoute = new Hono<AppEnv>().get(
  "/:projectId/user_flow",
  describeRoute({
    operationId: "getUserFlow",
    tags: ["Analyses"],
    summary: "Which way sessions go from (or to, or between) an event",
    description:
      "Per session of the window (default `30d`): its events that pass the filters, labelled by name (or, with `paths=true`, a screen view by its path), kept by `include`/`exclude`, consecutive equal labels merged, then cut from the first `startEvent` (`after`), up to it (`before`, right-aligned) or to the first `endEvent` after it (`between`; cuts longer than `steps` are counted in `skippedSessions`). Nodes are `<label>::step<n>` with the sessions at that step; links count sessions at consecutive steps. Labels beyond the `maxLabels` most frequent become `(other)`.",
    responses: cachedAnswerResponses({ description: "The flow", schema: UserFlowResponseSchema }),
  }),
  validate("query", UserFlowQuery),
  (c) => {
    const query = c.req.valid("query");
    if (query.mode === "between" && !query.endEvent) {
      throw ApiError.invalid("endEvent", "endEvent is required with mode=between");
    }
    const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
    const flow = {
      mode: query.mode,
      startEvent: query.startEvent,
      endEvent: query.mode === "between" ? query.endEvent : undefined,
      steps: query.steps,
      include: query.include ?? [],
      exclude: query.exclude ?? [],
      paths: query.paths === "true",
    };
    return answerObject(c, {
      route: "user_flow",
      scope,
      inputs: { ...flow, maxLabels: query.maxLabels },
      compute: async (db): Promise<Omit<UserFlowResponse, "meta">> => {
        const counts = await flowCounts(db, {
          projectId: c.get("project").id,
          window: scope.range.window,
          filters: scope.filters,
          ...flow,
        });
        const { nodes, links } = flowGraph(counts, query.maxLabels);
        return {
          mode: flow.mode,
          startEvent: flow.startEvent,
          endEvent: flow.endEvent ?? null,
          paths: flow.paths,
          totalSessions: counts.totalSessions,
          skippedSessions: counts.skippedSessions,
          node_count: nodes.length,
          link_count: links.length,
          nodes,
          links,
        };
      },
    });
  },
);
