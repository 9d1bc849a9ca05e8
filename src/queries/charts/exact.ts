import { and, desc, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { events } from "../../db/schema";
import type { FilterField } from "../../lib/filter-parser";
import { eventColumn } from "../columns";
import { eventConditions } from "../filter-conditions";
import { NUMERIC_TEXT_SQL } from "../sql-helpers";
import {
  type BucketValues,
  breakdownValue,
  bucketValues,
  type ChartSegment,
  type ChartSeriesQuery,
  fieldText,
  isPropertySegment,
  periodAndBucket,
  scanStart,
} from "./model";

/** The exact path of the chart queries: bucket values computed from the events themselves. */

/** The field as a number, or NULL when it is missing or not numeric (such rows are skipped). */
function fieldAmount(field: FilterField): SQL {
  if (field.kind === "column") return sql`(${eventColumn(field.column)})::numeric`;
  const text = fieldText(field);
  return sql`(case when ${text} ~ ${NUMERIC_TEXT_SQL} then (${text})::numeric end)`;
}

interface ValueColumns {
  profileId: SQL.Aliased | PgColumn;
  sessionId: SQL.Aliased | PgColumn;
  amount: SQL.Aliased;
}

/** The value of one bucket, as exact numeric (averages rounded half away from zero to 2 decimals). */
function segmentValue(segment: ChartSegment, source: ValueColumns): SQL {
  switch (segment) {
    case "event":
      return sql`count(*)::numeric`;
    case "user":
      return sql`count(distinct ${source.profileId})::numeric`;
    case "session":
      return sql`count(distinct ${source.sessionId})::numeric`;
    case "user_average":
      // Every bucket that has a row has at least one visitor: the division is safe.
      return sql`round(count(*)::numeric / count(distinct ${source.profileId}), 2)`;
    case "one_event_per_user":
      // The source already holds one row per visitor and period.
      return sql`count(*)::numeric`;
    case "property_sum":
      return sql`sum(${source.amount})`;
    case "property_average":
      return sql`round(avg(${source.amount}), 2)`;
    case "property_min":
      return sql`min(${source.amount})`;
    case "property_max":
      return sql`max(${source.amount})`;
  }
}

/** The exact path: bucket values computed from the events of both periods in one range scan. */
export function exactBucketValues(db: Database, query: ChartSeriesQuery): BucketValues {
  const property = isPropertySegment(query.segment) ? query.property : undefined;
  if (isPropertySegment(query.segment) && !property) throw new Error("property segment without property");
  const { period, bucket } = periodAndBucket(events.createdAt, query);
  const amount = property ? fieldAmount(property) : sql`null::numeric`;

  // Period, bucket and breakdown values are computed once here: repeated in GROUP BY or DISTINCT ON
  // they would carry separately bound parameters, which Postgres does not see as the same expression.
  const scoped = db
    .select({
      period: period.as("period"),
      bucket: bucket.as("bucket"),
      b0: breakdownValue(query.breakdowns[0]).as("b0"),
      b1: breakdownValue(query.breakdowns[1]).as("b1"),
      b2: breakdownValue(query.breakdowns[2]).as("b2"),
      profileId: events.profileId,
      sessionId: events.sessionId,
      createdAt: events.createdAt,
      id: events.id,
      amount: amount.as("amount"),
    })
    .from(events)
    .where(
      and(
        eq(events.projectId, query.projectId),
        gte(events.createdAt, new Date(scanStart(query))),
        lt(events.createdAt, new Date(query.current.window.end)),
        query.event === "*" ? undefined : eq(events.name, query.event),
        eventConditions(query.filters),
        // Property segments skip events whose value is missing or not numeric.
        property ? sql`${fieldAmount(property)} is not null` : undefined,
      ),
    )
    .as("scoped");

  // one_event_per_user: each visitor's latest matching event of the period (ties: the larger id),
  // which then lands in its bucket and breakdown group.
  const source =
    query.segment === "one_event_per_user"
      ? db
          .selectDistinctOn([scoped.period, scoped.profileId])
          .from(scoped)
          .orderBy(scoped.period, scoped.profileId, desc(scoped.createdAt), desc(scoped.id))
          .as("latest")
      : scoped;
  return bucketValues(db, source, segmentValue(query.segment, source));
}
