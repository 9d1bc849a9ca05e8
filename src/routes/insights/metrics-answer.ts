import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { formatInstant } from "../../lib/timezone";
import { type CachedAnswer, cacheKey, freshnessFor, readThrough } from "../../middleware/cache";
import { useDatabase } from "../../middleware/database";
import { sessionMetrics } from "../../queries/insights/metrics";
import {
  type ApproximateMetric,
  EMPTY_METRICS,
  type MetricsAnswer,
  type SessionMetrics,
} from "../../queries/insights/model";
import type { MetricsBody } from "../../schemas/insights";
import { checkedSessionScope, type InsightsScope } from "./scope";

/** The metrics either period took from sketches. */
function approximateMetrics(...answers: Array<MetricsAnswer | undefined>): ApproximateMetric[] {
  return [...new Set(answers.flatMap((answer) => answer?.approximate ?? []))];
}

function seriesOf(buckets: number[], values: SessionMetrics[], timezone: string) {
  return buckets.map((start, index) => ({
    date: formatInstant(start, timezone),
    ...(values[index] ?? EMPTY_METRICS),
  }));
}

/**
 * The metrics of a scope and of its previous period, through the KV cache. `/metrics` sends it
 * as it is; `/overview` (OpenPanel's name for the same figures) reshapes it, sharing the entry.
 */
export function answerMetrics(c: Context<AppEnv>, scope: InsightsScope): Promise<CachedAnswer<MetricsBody>> {
  const project = c.get("project");
  const { range } = scope;
  return cacheKey(project.id, "metrics", scope.fingerprint).then((key) =>
    readThrough(c, key, freshnessFor(range), async (): Promise<MetricsBody> => {
      const db = useDatabase(c);
      const sessionScope = await checkedSessionScope(db, scope, project.id);
      const current = sessionMetrics(db, sessionScope, range.buckets);
      const previous = range.previous
        ? sessionMetrics(db, { ...sessionScope, window: range.previous.window }, range.previous.buckets)
        : undefined;
      const [now, before] = await Promise.all([current, previous]);
      return {
        metrics: now.totals,
        series: seriesOf(range.buckets, now.series, range.timezone),
        ...(before && range.previous
          ? {
              previous: {
                metrics: before.totals,
                series: seriesOf(range.previous.buckets, before.series, range.timezone),
              },
            }
          : {}),
        meta: { ...range.meta, approximate: approximateMetrics(now, before) },
      };
    }),
  );
}
