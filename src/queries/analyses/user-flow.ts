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
  // The cut as [first, last] positions and the step of its first label (`before` right-aligns).
  const cut =
    scope.mode === "after"
      ? sql`anchor as first_pos, anchor + ${steps}::int - 1 as last_pos, 1 as first_step, false as skipped`
      : scope.mode === "before"
        ? sql`greatest(1, anchor - ${steps}::int + 1) as first_pos, anchor as last_pos,
            ${steps}::int - (anchor - greatest(1, anchor - ${steps}::int + 1)) as first_step, false as skipped`
        : sql`anchor as first_pos, finish as last_pos, 1 as first_step, finish - anchor + 1 > ${steps}::int as skipped`;
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
    merged as (
      select session_id, label, row_number() over (partition by session_id order by created_at, id) as pos
      from (
        select *, lag(label) over (partition by session_id order by created_at, id) as previous
        from labelled where ${kept}
      ) as kept_labels
      where previous is distinct from label
    ),
    -- Each session's first start label, its last position and (between) the first end label after
    -- the start, in one pass over its labels.
    bounded as (
      select session_id, anchor, max(pos) as final_pos,
        min(pos) filter (where label = ${end} and pos > anchor) as finish
      from (
        select session_id, pos, label, min(pos) filter (where label = ${start}) over (partition by session_id) as anchor
        from merged
      ) as with_anchor
      where anchor is not null
      group by session_id, anchor
    ),
    cuts as materialized (
      select session_id, final_pos, ${cut} from bounded
      where ${scope.mode === "between" ? sql`finish is not null` : sql`true`}
    ),
    drawn as materialized (
      select m.session_id, c.first_step + (m.pos - c.first_pos) as step, m.label
      from cuts c join merged m on m.session_id = c.session_id and m.pos between c.first_pos and c.last_pos
      -- A cut of fewer than 2 labels (the anchor ends the session, or starts it in before mode) is not drawn.
      where not c.skipped and least(c.last_pos, c.final_pos) - c.first_pos >= 1
    )
    select 'node' as kind, step, label, null as next_label, count(*) as sessions from drawn group by step, label
    union all
    select 'link', a.step, a.label, b.label, count(*) from drawn a
      join drawn b on b.session_id = a.session_id and b.step = a.step + 1 group by a.step, a.label, b.label
    union all
    select 'label', null, label, null, count(distinct session_id) from drawn group by label
    union all
    select 'total', null, null, null, count(distinct session_id) from drawn
    union all
    select 'skipped', null, null, null, count(*) from cuts where skipped`);
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
