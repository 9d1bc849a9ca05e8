import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { authorizeProject } from "../../middleware/auth";
import { admitClient } from "../../middleware/rate-limit";
import { activeUsersRoute } from "./analyses/active-users";
import { engagementRoute } from "./analyses/engagement";
import { funnelRoute } from "./analyses/funnel";
import { retentionRoute } from "./analyses/retention";
import { retentionCohortRoute } from "./analyses/retention-cohort";
import { userFlowRoute } from "./analyses/user-flow";
import { breakdown } from "./breakdown";
import { eventNamesRoute } from "./discovery/names";
import { eventPropertiesRoute } from "./discovery/properties";
import { propertyValuesRoute } from "./discovery/property-values";
import { eventListing } from "./events";
import { live } from "./live";
import { metrics } from "./metrics";
import { overview } from "./overview";
import { pagePerformanceRoute } from "./page-performance";
import { pages } from "./pages";
import { profileListing } from "./profiles/list";
import { profileMetricsRoute } from "./profiles/metrics";
import { profileDetail } from "./profiles/profile";
import { profileSessions } from "./profiles/sessions";
import { sessionListing } from "./sessions";
import { traffic } from "./traffic";
import { notSupported } from "./unsupported";

/** `/insights/{projectId}/…`: every route reads one project the client may read. */
export const insights = new Hono<AppEnv>()
  .use("/:projectId/*", admitClient, async (c, next) => {
    await authorizeProject(c, c.req.param("projectId") ?? "");
    await next();
  })
  .route("/", live)
  .route("/", metrics)
  .route("/", pages)
  .route("/", overview)
  .route("/", pagePerformanceRoute)
  .route("/", eventNamesRoute)
  .route("/", eventPropertiesRoute)
  .route("/", propertyValuesRoute)
  .route("/", eventListing)
  .route("/", sessionListing)
  .route("/", profileListing)
  .route("/", profileDetail)
  .route("/", profileSessions)
  .route("/", profileMetricsRoute)
  .route("/", funnelRoute)
  .route("/", engagementRoute)
  .route("/", activeUsersRoute)
  .route("/", retentionCohortRoute)
  .route("/", retentionRoute)
  .route("/", userFlowRoute)
  .route("/", traffic)
  .route("/", notSupported)
  // Last: `/:projectId/:dimension` would otherwise shadow the named routes.
  .route("/", breakdown);
