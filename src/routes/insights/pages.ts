import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { validate } from "../../middleware/validate";
import { entryExitPages } from "../../queries/insights/entry-exit-pages";
import { topPages } from "../../queries/insights/pages";
import { PageRowSchema } from "../../schemas/insights";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { CursorParam, LimitParam, OneOfParam, RangeParams } from "../params";
import { answerList, ListQuery } from "./list";

const TopPagesQuery = v.object({ ...RangeParams, limit: LimitParam(1000), cursor: CursorParam });

const EntryExitQuery = v.object({
  ...RangeParams,
  mode: v.optional(
    OneOfParam("mode", ["entry", "exit"], "Entry (first) or exit (last) pages; default `entry`."),
    "entry",
  ),
  limit: LimitParam(1000),
  cursor: CursorParam,
});

const EntryExitRowSchema = v.object({
  origin: v.nullable(v.string()),
  path: v.nullable(v.string()),
  sessions: v.pipe(
    v.number(),
    v.description("Sessions whose first (entry) or last (exit) screen view is this page."),
  ),
  pageviews: v.pipe(v.number(), v.description("Every screen view of those sessions (OpenPanel's meaning).")),
  revenue: v.pipe(v.number(), v.description("Revenue of those sessions, cents.")),
  bounce_rate: v.pipe(v.number(), v.description("100 × bounced ÷ sessions, 2 decimals.")),
});

export const pages = new Hono<AppEnv>()
  .get(
    "/:projectId/pages",
    describeRoute({
      operationId: "listPages",
      tags: ["Insights"],
      summary: "Top pages",
      description:
        "Pages of the sessions in the window, sorted by sessions (desc), then path, then origin. Paged with `limit`/`cursor`; the next page is in `Link` and `X-Next-Cursor`.",
      responses: cachedAnswerResponses({
        description: "Pages",
        schema: v.array(PageRowSchema),
        headers: LIST_RESPONSE_HEADERS,
      }),
    }),
    validate("query", ListQuery),
    (c) => answerList(c, "pages", c.req.valid("query"), topPages),
  )
  .get(
    "/:projectId/pages/top",
    describeRoute({
      operationId: "listTopPages",
      tags: ["Insights"],
      summary: "Top pages, as OpenPanel's /pages/top",
      description:
        "The rows, order and numbers of /pages for the same query, with `limit` defaulting to 1000 as OpenPanel does. Paged with `limit`/`cursor` like /pages (its cursors are its own).",
      responses: cachedAnswerResponses({
        description: "Pages",
        schema: v.array(PageRowSchema),
        headers: LIST_RESPONSE_HEADERS,
      }),
    }),
    validate("query", TopPagesQuery),
    (c) => answerList(c, "pages/top", c.req.valid("query"), topPages, "30d"),
  )
  .get(
    "/:projectId/pages/entry_exit",
    describeRoute({
      operationId: "listEntryExitPages",
      tags: ["Insights"],
      summary: "Entry or exit pages",
      description:
        "One row per page that is the entry (`mode=entry`, the session's first screen view) or the exit (`mode=exit`, its last) of at least one session of the window, by sessions, then path, then origin. Sessions without a screen view have neither. Paged with `limit`/`cursor`.",
      responses: cachedAnswerResponses({
        description: "Entry or exit pages",
        schema: v.array(EntryExitRowSchema),
        headers: LIST_RESPONSE_HEADERS,
      }),
    }),
    validate("query", EntryExitQuery),
    (c) => {
      const query = c.req.valid("query");
      return answerList(
        c,
        `pages/entry_exit/${query.mode}`,
        query,
        (db, scope, page) => entryExitPages(db, scope, query.mode, page),
        "30d",
      );
    },
  );
