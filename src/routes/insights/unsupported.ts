import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { AppEnv } from "../../env";
import { ApiError } from "../../lib/errors";
import { PROJECT_ROUTE_PROBLEMS, problemResponses } from "../openapi";

/**
 * OpenPanel routes this API does not serve (contract A8): groups and saved reports. After
 * authentication and the project check (done for every project route), a 404 that says so,
 * rather than the 404 of an unknown path.
 */
function unsupported(feature: string) {
  return () => {
    throw new ApiError({ code: "NOT_FOUND", detail: `${feature} are not supported by this API.` });
  };
}

const documented = (operationId: string, summary: string, description: string) =>
  describeRoute({
    operationId,
    tags: ["Insights"],
    summary,
    description,
    responses: problemResponses(...PROJECT_ROUTE_PROBLEMS, "NOT_FOUND"),
  });
const GROUPS = [
  "Groups (not supported)",
  "Always 404 NOT_FOUND: groups are not supported by this API.",
] as const;
const REPORTS = documented(
  "getReportData",
  "Saved reports (not supported)",
  "Always 404 NOT_FOUND: saved reports are not supported by this API.",
);
// Deeper paths answer the same, without a page of their own in the document.
const hidden = describeRoute({ hide: true });

export const notSupported = new Hono<AppEnv>()
  .get("/:projectId/groups", documented("listGroups", ...GROUPS), unsupported("Groups"))
  .get("/:projectId/groups/:groupId", documented("getGroup", ...GROUPS), unsupported("Groups"))
  .get("/:projectId/groups/*", hidden, unsupported("Groups"))
  .get("/:projectId/reports/:reportId/data", REPORTS, unsupported("Saved reports"))
  .get("/:projectId/reports/*", hidden, unsupported("Saved reports"));
