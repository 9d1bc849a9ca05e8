import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { addLocalDays, dayNumberDate, localDayNumber, startOfLocalDay } from "../../../lib/timezone";
import { validate } from "../../../middleware/validate";
import { activeUsersSeries } from "../../../queries/analyses/active-users";
import { type ActiveUsersResponse, ActiveUsersResponseSchema } from "../../../schemas/analyses";
import { cachedAnswerResponses } from "../../openapi";
import { FlagParam, RangeParams, WholeNumberParam } from "../../params";
import { answerObject } from "../object-answer";
import { activitySource, resolveInsightsScope } from "../scope";

const ActiveUsersQuery = v.object({
  ...RangeParams,
  days: v.optional(
    WholeNumberParam(
      "days",
      90,
      "Each point counts the users of this many local days up to it, 1–90 (default 7).",
    ),
    "7",
  ),
  identified: v.optional(
    FlagParam("identified", "Only identified users (`true`); default: every user."),
    "false",
  ),
});

const LABELS: Record<number, string> = { 1: "DAU", 7: "WAU", 30: "MAU" };

export const activeUsersRoute = new Hono<AppEnv>().get(
  "/:projectId/active_users",
  describeRoute({
    operationId: "getActiveUsers",
    tags: ["Analyses"],
    summary: "Daily, weekly, monthly (any 1–90 days) active users per local day",
    description:
      "One point per local day of the window (default `30d`), ascending, every day present and none after today: the distinct users (profile ids; anonymous visitors count unless `identified=true`) with an event that passes the filters on that day or the `days − 1` days before it (which may precede the window). Exact.",
    responses: cachedAnswerResponses({ description: "Active users", schema: ActiveUsersResponseSchema }),
  }),
  validate("query", ActiveUsersQuery),
  (c) => {
    const query = c.req.valid("query");
    const scope = resolveInsightsScope(c, query, { autoInterval: false, defaultRange: "30d" });
    const { timezone, window } = scope.range;
    const dayStart = startOfLocalDay(window.start, timezone);
    const readUntil = Math.min(window.end, addLocalDays(startOfLocalDay(Date.now(), timezone), 1, timezone));
    const firstDay = localDayNumber(dayStart, timezone);
    const lastDay = localDayNumber(readUntil - 1, timezone);
    const inputs = { days: query.days, identified: query.identified, lastDay };
    return answerObject(c, {
      route: "active_users",
      scope,
      inputs,
      compute: async (db): Promise<Omit<ActiveUsersResponse, "meta">> => {
        const users =
          lastDay < firstDay
            ? []
            : await activeUsersSeries(db, {
                ...activitySource(c.get("project").id, scope),
                identifiedOnly: query.identified === "true",
                days: query.days,
                firstDay,
                lastDay,
                readFrom: addLocalDays(dayStart, -(query.days - 1), timezone),
                readUntil,
              });
        return {
          window_days: query.days,
          label: LABELS[query.days] ?? `${query.days}d active`,
          series: users.map((count, i) => ({
            date: dayNumberDate(firstDay + i),
            users: count,
          })),
        };
      },
    });
  },
);
