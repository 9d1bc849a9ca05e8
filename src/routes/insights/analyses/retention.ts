import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { percentOf } from "../../../lib/decimal";
import { validate } from "../../../middleware/validate";
import { weeklyReturn } from "../../../queries/analyses/retention";
import { WeeklyReturnResponse } from "../../../schemas/analyses";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../../openapi";
import { RangeParams } from "../../params";
import { activitySource } from "../scope";
import { answerWeeks, resolveWeekScope, weekDate } from "./weeks";

const RetentionQuery = v.object({ ...RangeParams });

export const retentionRoute = new Hono<AppEnv>().get(
  "/:projectId/retention",
  describeRoute({
    operationId: "getWeeklyRetention",
    tags: ["Analyses"],
    summary: "Identified users who come back the next week",
    description:
      "One row per local Monday week of the window (default: the current week and the 12 before it): identified users with an event in it that passes the filters, and those with one the week after too (looked up past the window; 0 while that week has not begun). `retention` is percent 0–100 with 2 decimals; `complete` says the week after has ended.",
    responses: cachedAnswerResponses({
      description: "Weekly return",
      schema: WeeklyReturnResponse,
      headers: LIST_RESPONSE_HEADERS,
    }),
  }),
  validate("query", RetentionQuery),
  (c) => {
    const query = c.req.valid("query");
    const weeks = resolveWeekScope(c, query);
    return answerWeeks(c, weeks, "retention", {}, async (db) => {
      const counts = await weeklyReturn(db, {
        ...activitySource(c.get("project").id, weeks.scope),
        firstWeek: weeks.firstWeek,
        lastWeek: weeks.lastWeek,
        readUntil: weeks.endOfNextWeek,
      });
      const of = (week: number, offset: number) =>
        counts.find((count) => count.week === week && count.offset === offset)?.users ?? 0;
      return Array.from({ length: weeks.lastWeek - weeks.firstWeek + 1 }, (_, index) => {
        const week = weeks.firstWeek + index;
        const active = of(week, 0);
        const retained = week + 1 <= weeks.currentWeek ? of(week, 1) : 0;
        return {
          date: weekDate(week),
          active_users: active,
          retained_users: retained,
          retention: percentOf(retained, active),
          complete: week + 1 < weeks.currentWeek,
        };
      });
    });
  },
);
