import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { validate } from "../../../middleware/validate";
import { cohortActivity, type WeekCount } from "../../../queries/analyses/retention";
import { type CohortRow, RetentionCohortResponse } from "../../../schemas/analyses";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../../openapi";
import { OneOfParam, RangeParams } from "../../params";
import { activitySource } from "../scope";
import { answerWeeks, resolveWeekScope, type WeekScope, weekDate } from "./weeks";

const CohortQuery = v.object({
  ...RangeParams,
  criteria: v.optional(
    OneOfParam(
      "criteria",
      ["on_or_after", "on"],
      "`on_or_after` (default): active that week or any later one of the window; `on`: active that week.",
    ),
    "on_or_after",
  ),
});

const fraction = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((100 * part) / whole) / 100);

/** The cohort rows, empty cohorts included, from the counted cells (contract A6). */
function cohortRows(weeks: WeekScope, counts: WeekCount[], criteria: "on" | "on_or_after"): CohortRow[] {
  const size = weeks.lastWeek - weeks.firstWeek + 1;
  const lastObserved = Math.min(weeks.lastWeek, weeks.currentWeek);
  return Array.from({ length: size }, (_, index) => {
    const cohort = weeks.firstWeek + index;
    const cells = Array.from({ length: size }, () => 0);
    for (const count of counts) {
      if (count.week === cohort && count.offset < size)
        cells[count.offset] = (cells[count.offset] ?? 0) + count.users;
    }
    // on_or_after: a user whose last active week is `offset` weeks on counts in cells 0…offset.
    const values =
      criteria === "on" ? cells : cells.map((_, k) => cells.slice(k).reduce((sum, users) => sum + users, 0));
    const observed = Math.max(0, Math.min(size, lastObserved - cohort + 1));
    const shown = values.map((users, k) => (k < observed ? users : 0));
    const total = criteria === "on" ? (shown[0] ?? 0) : (values[0] ?? 0);
    return {
      cohort_interval: weekDate(cohort),
      sum: total,
      values: shown,
      percentages: shown.map((users) => fraction(users, total)),
      observed,
    };
  });
}

/** The leading Weighted Average row over the cohort rows (contract A6). */
function weightedAverage(rows: CohortRow[]): CohortRow {
  const filled = rows.filter((row) => row.sum > 0);
  const size = rows[0]?.values.length ?? 0;
  const mean = filled.length === 0 ? 0 : filled.reduce((sum, row) => sum + row.sum, 0) / filled.length;
  const pools = Array.from({ length: size }, (_, k) => filled.filter((row) => k < row.observed));
  const rates = pools.map((pool, k) => {
    const members = pool.reduce((sum, row) => sum + row.sum, 0);
    return members === 0 ? 0 : pool.reduce((sum, row) => sum + (row.values[k] ?? 0), 0) / members;
  });
  return {
    cohort_interval: "Weighted Average",
    sum: Math.round(mean),
    values: rates.map((rate) => Math.round(rate * mean)),
    percentages: rates.map((rate) => Math.round(rate * 100) / 100),
    observed: pools.filter((pool) => pool.length > 0).length,
  };
}

export const retentionCohortRoute = new Hono<AppEnv>().get(
  "/:projectId/retention/cohort",
  describeRoute({
    operationId: "getRetentionCohorts",
    tags: ["Analyses"],
    summary: "Weekly retention cohorts of identified users",
    description:
      "Whole local Monday weeks (default: the current week and the 12 before it; at most 105). A user's cohort is the week of its first identified event ever that passes the filters; cell k counts the cohort's users active k weeks later (`on`) or in any week from then to the window's last (`on_or_after`). A leading `Weighted Average` row; `percentages` are fractions 0–1; `observed` counts the leading cells whose week has begun. Exact.",
    responses: cachedAnswerResponses({
      description: "Cohort rows",
      schema: RetentionCohortResponse,
      headers: LIST_RESPONSE_HEADERS,
    }),
  }),
  validate("query", CohortQuery),
  (c) => {
    const query = c.req.valid("query");
    const weeks = resolveWeekScope(c, query);
    return answerWeeks(c, weeks, "retention/cohort", { criteria: query.criteria }, async (db) => {
      const counts = await cohortActivity(
        db,
        {
          ...activitySource(c.get("project").id, weeks.scope),
          firstWeek: weeks.firstWeek,
          lastWeek: weeks.lastWeek,
          readUntil: weeks.end,
        },
        query.criteria,
      );
      const rows = cohortRows(weeks, counts, query.criteria);
      return [weightedAverage(rows), ...rows];
    });
  },
);
