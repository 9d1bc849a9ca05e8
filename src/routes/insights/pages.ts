import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import * as v from "valibot";
import type { AppEnv } from "../../env";
import { validate } from "../../middleware/validate";
import { topPages } from "../../queries/insights/pages";
import { PageRowSchema } from "../../schemas/insights";
import { cachedAnswerResponses, LIST_RESPONSE_HEADERS } from "../openapi";
import { CursorParam, LimitParam, RangeParams } from "../params";
import { answerList, ListQuery } from "./list";

const TopPagesQuery = v.object({ ...RangeParams, limit: LimitParam(1000), cursor: CursorParam });

export const pages = new Hono<AppEnv>()
  .get(
    "/:projectId/pages",
    describeRoute({
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
    (c) => answerList(c, "pages/top", c.req.valid("query"), topPages),
  );
