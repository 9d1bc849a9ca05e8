import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { events } from "../../db/schema";
import type { Filter } from "../../lib/filter-parser";
import { eventConditions } from "../filter-conditions";
import type { TimeWindow } from "../insights/model";
import { toNumber } from "../sql-helpers";

export const FLOW_MODES = ["after", "before", "between"] as const;
export type FlowMode = (typeof FLOW_MODES)[number];

export interface FlowScope {
  projectId: string;
  window: TimeWindow;
  filters: Filter[];
  mode: FlowMode;
  startEvent: string;
  endEvent?: string;
  steps: number;
  include: string[];
  exclude: string[];
  /** A screen view is labelled by its path. */
  paths: boolean;
}

/** What the cuts of the window's sessions add up to, before labels beyond maxLabels become `(other)`. */
export interface FlowCounts {
  /** Sessions with that label at that step. */
  nodes: Array<{ step: number; label: string; sessions: number }>;
  /** Sessions with `from` at `step` and `to` at step + 1. */
  links: Array<{ step: number; from: string; to: string; sessions: number }>;
  /** Sessions whose cut holds the label at any step. */
  labels: Array<{ label: string; sessions: number }>;
  totalSessions: number;
  skippedSessions: number;
}

/**
 * `/user_flow` (contract A7), in Postgres: each session's events of the window that pass the
 * filters, labelled (the name, or a screen view's path), kept by `include`/`exclude` (the start
 * and end labels always), consecutive equal labels merged, then cut around the first start label
 * (and, between, the first end label after it) and counted per step. Only those counts leave the
 * database.
 */
export async function flowCounts(db: Database, scope: FlowScope): Promise<FlowCounts> {
  const label = scope.paths
    ? sql`case when ${events.name} = 'screen_view' then coalesce(nullif(${events.path}, ''), 'screen_view') else ${events.name} end`
    : sql`${events.name}`;
  const anchors = [scope.startEvent, ...(scope.mode === "between" && scope.endEvent ? [scope.endEvent] : [])];
  const kept: SQL =
    scope.include.length > 0
      ? sql`label = any(${sql.param([...scope.include, ...anchors])}::text[])`
      : scope.exclude.length > 0
        ? sql`(label <> all(${sql.param(scope.exclude)}::text[]) or label = any(${sql.param(anchors)}::text[]))`
        : sql`true`;
  const start = scope.startEvent;
  const end = scope.endEvent ?? "";
  const steps = scope.steps;
  // The cut as [first, last] positions and the step of its first label (`before` right-aligns);
  // between, a cut longer than `steps` is skipped.
  const cut =
    scope.mode === "after"
      ? { first: sql`anchor`, last: sql`anchor + ${steps}::int - 1`, firstStep: sql`1`, skipped: sql`false` }
      : scope.mode === "before"
        ? {
            first: sql`greatest(1, anchor - ${steps}::int + 1)`,
            last: sql`anchor`,
            firstStep: sql`${steps}::int - (anchor - greatest(1, anchor - ${steps}::int + 1))`,
            skipped: sql`false`,
          }
        : {
            first: sql`anchor`,
            last: sql`finish`,
            firstStep: sql`1`,
            skipped: sql`finish - anchor + 1 > ${steps}::int`,
          };
  const result = await db.execute<{
    kind: string;
    step: number | null;
    label: string | null;
    next_label: string | null;
    sessions: number | string;
  }>(sql`
    with labelled as (
      select ${events.sessionId} as session_id, ${events.createdAt} as created_at, ${events.id} as id, ${label} as label
      from ${events}
      where ${and(
        eq(events.projectId, scope.projectId),
        gte(events.createdAt, new Date(scope.window.start)),
        lt(events.createdAt, new Date(scope.window.end)),
        eventConditions(scope.filters),
      )}
    ),
    -- One sort of the window's events by (session, time, id); every level below keeps that order,
    -- so the positions, the anchor and the end are found in the same pass.
    merged as (
      select session_id, label, row_number() over (partition by session_id order by created_at, id) as pos
      from (
        select *, lag(label) over (partition by session_id order by created_at, id) as previous
        from labelled where ${kept}
      ) as kept_labels
      where previous is distinct from label
    ),
    anchored as (
      select session_id, pos, label,
        min(pos) filter (where label = ${start}) over whole_session as anchor,
        max(pos) over whole_session as final_pos
      from merged
      window whole_session as (partition by session_id)
    ),
    -- Between: the first end label after the start.
    bounded as (
      select *, ${
        scope.mode === "between"
          ? sql`min(pos) filter (where label = ${end} and pos > anchor) over (partition by session_id)`
          : sql`null::bigint`
      } as finish
      from anchored where anchor is not null
    ),
    drawn as materialized (
      select session_id, ${cut.firstStep} + (pos - ${cut.first}) as step, label
      from bounded
      -- A cut of fewer than 2 labels (the anchor ends the session, or starts it in before mode) is not drawn.
      where ${scope.mode === "between" ? sql`finish is not null and ` : sql``}not (${cut.skipped})
        and least(${cut.last}, final_pos) - ${cut.first} >= 1
        and pos between ${cut.first} and ${cut.last}
    ),
    skipped as (${
      scope.mode === "between"
        ? sql`select count(distinct session_id) as sessions from bounded where finish is not null and ${cut.skipped}`
        : sql`select 0 as sessions`
    })
    select 'node' as kind, step, label, null as next_label, count(*) as sessions from drawn group by step, label
    union all
    select 'link', a.step, a.label, b.label, count(*) from drawn a
      join drawn b on b.session_id = a.session_id and b.step = a.step + 1 group by a.step, a.label, b.label
    union all
    select 'label', null, label, null, count(distinct session_id) from drawn group by label
    union all
    select 'total', null, null, null, count(distinct session_id) from drawn
    union all
    select 'skipped', null, null, null, sessions from skipped`);
  const counts: FlowCounts = { nodes: [], links: [], labels: [], totalSessions: 0, skippedSessions: 0 };
  for (const row of result.rows) {
    const sessions = toNumber(row.sessions);
    if (row.kind === "node")
      counts.nodes.push({ step: toNumber(row.step), label: String(row.label), sessions });
    else if (row.kind === "link")
      counts.links.push({
        step: toNumber(row.step),
        from: String(row.label),
        to: String(row.next_label),
        sessions,
      });
    else if (row.kind === "label") counts.labels.push({ label: String(row.label), sessions });
    else if (row.kind === "total") counts.totalSessions = sessions;
    else counts.skippedSessions = sessions;
  }
  return counts;
}
