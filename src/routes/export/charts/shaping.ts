import { compareDecimals, decimalSum } from "../../../lib/decimal";
import { windowMeta } from "../../../lib/range";
import { formatInstant } from "../../../lib/timezone";
import type { ChartGroup, ChartSeriesResult } from "../../../queries/charts/model";
import { chartMetrics, comparison } from "../../../queries/charts/summaries";
import { type ChartBody, type ChartSeries, NOT_SET_LABEL } from "../../../schemas/charts";
import type { ChartRequest, NormalizedSeries } from "./request";

/** The chart answer as the wire has it: series ids and names, ordered, with their summaries. */

/** 32-bit FNV-1a of the UTF-8 bytes, as 8 hex digits: short, stable ids for breakdown series. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

interface ShapedSeries {
  series: ChartSeries;
  /** Sort keys: the exact sum, request position and rank within the request. */
  sum: string;
  index: number;
  rank: number;
}

function shapeGroup(
  request: NormalizedSeries,
  index: number,
  rank: number,
  group: ChartGroup,
  breakdownNames: string[],
  dates: string[],
): ShapedSeries {
  const eventId = `a${index + 1}`;
  const hasBreakdowns = breakdownNames.length > 0;
  const previous = group.previous;
  const data = group.current.map((value, position) => {
    const partner = previous?.[position];
    return {
      date: dates[position] ?? "",
      count: Number(value),
      ...(partner === undefined ? {} : { previous: comparison(value, partner) }),
    };
  });
  return {
    series: {
      id: hasBreakdowns ? `${eventId}-${fnv1a(JSON.stringify(group.breakdowns))}` : eventId,
      names: [request.name, ...group.breakdowns.map((value) => value ?? NOT_SET_LABEL)],
      event: {
        id: eventId,
        name: request.name,
        ...(hasBreakdowns
          ? {
              breakdowns: Object.fromEntries(
                breakdownNames.map((name, position) => [name, group.breakdowns[position] ?? null]),
              ),
            }
          : {}),
      },
      metrics: chartMetrics(group.current, previous),
      data,
    },
    sum: decimalSum(group.current),
    index,
    rank,
  };
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Sum desc; ties by series name, request order, then the group's rank (its breakdown values). */
function bySumDesc(a: ShapedSeries, b: ShapedSeries): number {
  return (
    compareDecimals(b.sum, a.sum) ||
    byCodeUnit(a.series.event.name, b.series.event.name) ||
    a.index - b.index ||
    a.rank - b.rank
  );
}

/** The answer to a chart request from the ranked groups of each of its series (in request order). */
export function chartBody(request: ChartRequest, results: ChartSeriesResult[]): ChartBody {
  const { range, breakdownNames } = request;
  const dates = range.buckets.map((start) => formatInstant(start, range.timezone));
  const shaped = results
    .flatMap((result, index) => {
      const series = request.series[index] as NormalizedSeries;
      return result.groups.map((group, rank) =>
        shapeGroup(series, index, rank, group, breakdownNames, dates),
      );
    })
    .sort(bySumDesc);
  const previousValues = range.previous
    ? results.flatMap((result) => result.groups.flatMap((group) => group.previous ?? []))
    : undefined;
  return {
    series: shaped.map((item) => item.series),
    metrics: chartMetrics(
      results.flatMap((result) => result.groups.flatMap((group) => group.current)),
      previousValues,
    ),
    meta: {
      ...range.meta,
      truncated: results.some((result) => result.truncated),
      ...(range.previous ? { previous: windowMeta(range.previous.window, range.timezone) } : {}),
    },
  };
}
