import { describe, expect, it } from "vitest";
import { answerDifferences, countsSomething } from "../../scripts/differential/compare";
import { differentialRequest, type ValuePools } from "../../scripts/differential/requests";

/**
 * `npm run differential` (scripts/differential/): what it accepts as the same answer from the
 * pre-aggregated and the exact path, and that its requests are reproducible. The run itself needs
 * two Workers and a seeded database; its comparison is checked here.
 */

const metrics = (visitors: number, sessions: number, approximate: string[]) => ({
  metrics: { unique_visitors: visitors, total_sessions: sessions },
  series: [{ date: "2026-11-01", unique_visitors: visitors, total_sessions: sessions }],
  meta: { approximate },
});

describe("the differential comparison", () => {
  it("finds nothing between equal answers, and ignores meta.approximate itself", () => {
    expect(answerDifferences(metrics(100, 120, ["unique_visitors"]), metrics(100, 120, []))).toEqual([]);
  });

  it("allows ±2 % on a metric meta.approximate names, and not one unit more", () => {
    expect(answerDifferences(metrics(102, 120, ["unique_visitors"]), metrics(100, 120, []))).toEqual([]);
    expect(answerDifferences(metrics(103, 120, ["unique_visitors"]), metrics(100, 120, []))).toEqual([
      "metrics.unique_visitors: 103 ≠ 100",
      "series[0].unique_visitors: 103 ≠ 100",
    ]);
  });

  it("allows nothing on a metric meta.approximate does not name", () => {
    expect(answerDifferences(metrics(100, 121, ["unique_visitors"]), metrics(100, 120, []))).toEqual([
      "metrics.total_sessions: 121 ≠ 120",
      "series[0].total_sessions: 121 ≠ 120",
    ]);
    expect(answerDifferences(metrics(101, 120, []), metrics(100, 120, []))).toEqual([
      "metrics.unique_visitors: 101 ≠ 100",
      "series[0].unique_visitors: 101 ≠ 100",
    ]);
  });

  it("names rows missing on one side, texts that differ and fields only one side has", () => {
    expect(
      answerDifferences(
        [{ name: "NO", sessions: 3 }],
        [
          { name: "NO", sessions: 3 },
          { name: "SE", sessions: 1 },
        ],
      ),
    ).toEqual([": 1 items ≠ 2"]);
    expect(answerDifferences([{ name: "NO" }], [{ name: "SE" }])).toEqual(['[0].name: "NO" ≠ "SE"']);
    expect(answerDifferences({ a: 1 }, { a: 1, b: 2 })).toEqual(["b: null ≠ 2"]);
  });

  it("tells an answer that counts something from one that counts nothing, meta aside", () => {
    expect(countsSomething(metrics(0, 0, []))).toBe(false);
    expect(countsSomething({ series: [], meta: { total: 5 } })).toBe(false);
    expect(countsSomething(metrics(0, 1, []))).toBe(true);
  });
});

describe("the differential requests", () => {
  const pools: ValuePools = new Map([
    ["country", ["NO", "US"]],
    ["path", ["/pricing", "/docs/start"]],
    ["name", ["screen_view"]],
  ]);
  const lastDay = Date.UTC(2026, 10, 27);

  it("are the same for the same seed and index, and differ between indexes", () => {
    const draws = Array.from({ length: 50 }, (_, index) =>
      differentialRequest(7, index, "demo", pools, lastDay),
    );
    expect(draws).toEqual(
      Array.from({ length: 50 }, (_, index) => differentialRequest(7, index, "demo", pools, lastDay)),
    );
    expect(new Set(draws.map((draw) => draw.path)).size).toBeGreaterThan(45);
  });

  it("filter only on values of the pools, and end their windows on the last day or name a preset", () => {
    const presets = new Set<string>();
    for (let index = 0; index < 200; index++) {
      const url = new URL(differentialRequest(3, index, "demo", pools, lastDay).path, "http://x");
      const range = url.searchParams.get("range");
      if (range === null) expect(url.searchParams.get("endDate")).toBe("2026-11-27");
      else presets.add(range);
      const filters: Array<{ name: string; operator: string; value: string[] }> = JSON.parse(
        url.searchParams.get("filters") ?? "[]",
      );
      for (const filter of filters) {
        expect(["country", "path", "name"]).toContain(filter.name);
        if (filter.operator === "is" || filter.operator === "isNot") {
          for (const value of filter.value) expect(pools.get(filter.name as "country")).toContain(value);
        }
      }
    }
    expect([...presets].sort()).toEqual(["30d", "7d", "lastMonth", "monthToDate", "today", "yesterday"]);
  });
});
