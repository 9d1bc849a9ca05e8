import { describe, expect, it } from "vitest";
import { BenchUsageError, parseBenchOptions } from "../../scripts/bench/options";

/**
 * The benchmark's options for how its filtered section is measured: in rounds (each cell's runs
 * spread over the section's minutes) and, on request, with the Worker simulated far from its database.
 */

/** No environment: the options read only BENCH_ADMIN_URL from it. */
const env = {} as NodeJS.ProcessEnv;

describe("the benchmark's rounds and simulated distance", () => {
  it("measures the filtered section in three rounds, one in the smoke, or as many as --rounds says", () => {
    expect(parseBenchOptions([], env).rounds).toBe(3);
    expect(parseBenchOptions(["--smoke"], env).rounds).toBe(1);
    expect(parseBenchOptions(["--rounds", "5"], env).rounds).toBe(5);
    expect(parseBenchOptions(["--smoke", "--rounds=2"], env).rounds).toBe(2);
    for (const bad of ["0", "-1", "1.5", "many"]) {
      expect(() => parseBenchOptions(["--rounds", bad], env)).toThrow(
        new BenchUsageError("--rounds must be an integer ≥ 1"),
      );
    }
  });

  it("runs next to its database unless --db-rtt names a round trip in milliseconds", () => {
    expect(parseBenchOptions([], env).dbRoundTripMs).toBe(0);
    expect(parseBenchOptions(["--db-rtt", "40"], env).dbRoundTripMs).toBe(40);
    expect(parseBenchOptions(["--db-rtt=0"], env).dbRoundTripMs).toBe(0);
    for (const bad of ["-5", "2.5", "far"]) {
      expect(() => parseBenchOptions(["--db-rtt", bad], env)).toThrow(
        new BenchUsageError("--db-rtt must be an integer ≥ 0"),
      );
    }
    expect(() => parseBenchOptions(["--db-rtt"], env)).toThrow(new BenchUsageError("--db-rtt needs a value"));
  });
});
