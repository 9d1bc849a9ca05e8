import { describe, expect, it } from "vitest";
import { BenchUsageError, parseBenchOptions } from "../../scripts/bench/options";

/**
 * The benchmark's options for how its filtered section is measured: in rounds (each cell's runs
 * spread over the section's minutes) and, on request, with the Worker simulated far from its database.
 */

/** No environment: the options read only BENCH_ADMIN_URL from it. */
const env = {} as NodeJS.ProcessEnv;

describe("the benchmark's rounds, simulated distance and slices", () => {
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

  it("loads up to 10M events in one piece, more in slices of 5M, or in as many slices as --slices says", () => {
    expect(parseBenchOptions([], env).slices).toBe(1);
    expect(parseBenchOptions(["--smoke"], env).slices).toBe(1);
    expect(parseBenchOptions(["--events", "10000000"], env).slices).toBe(1);
    expect(parseBenchOptions(["--events", "10000001"], env).slices).toBe(3);
    expect(parseBenchOptions(["--events", "30000000"], env).slices).toBe(6);
    expect(parseBenchOptions(["--events", "30000000", "--slices", "1"], env).slices).toBe(1);
    expect(parseBenchOptions(["--slices=4"], env).slices).toBe(4);
    for (const bad of ["0", "-2", "1.5", "few"]) {
      expect(() => parseBenchOptions(["--slices", bad], env)).toThrow(
        new BenchUsageError("--slices must be an integer ≥ 1"),
      );
    }
  });
});
