import { describe, expect, it } from "vitest";
import { diskVerdict, gib } from "../../scripts/bench/disk-guard";
import { BenchUsageError, parseBenchOptions } from "../../scripts/bench/options";

/**
 * The benchmark's disk guard (scripts/bench/disk-guard.ts): a load stops before it fills the disk
 * the machine's Postgres and tests share. The sampling itself runs in `npm run bench`; here, the
 * verdict on a sample and the option that sets the floor.
 */

const GIB = 1024 ** 3;
/** No environment: the options read only BENCH_ADMIN_URL from it (the Worker's bindings widen the type). */
const env = {} as NodeJS.ProcessEnv;

describe("the benchmark's disk guard", () => {
  it("lets a load go on at or above the floor and stops it one byte below", () => {
    expect(diskVerdict({ freeBytes: 5 * GIB }, 5 * GIB)).toBeUndefined();
    expect(diskVerdict({ freeBytes: 80 * GIB }, 5 * GIB)).toBeUndefined();
    expect(diskVerdict({ freeBytes: 5 * GIB - 1 }, 5 * GIB)).toBe(
      "only 5.0 GB left on the disk of the database (the floor is 5.0 GB, --min-free-gb): " +
        "the load was stopped before it filled the disk (its open transaction rolled back; " +
        "the data set has no marker, so the next run loads it again)",
    );
  });

  it("writes sizes in GiB with one decimal", () => {
    expect(gib(26.6 * GIB)).toBe("26.6 GB");
    expect(gib(0)).toBe("0.0 GB");
  });

  it("takes its floor from --min-free-gb, 5 GiB when not given", () => {
    expect(parseBenchOptions([], env).minFreeGb).toBe(5);
    expect(parseBenchOptions(["--min-free-gb", "12.5"], env).minFreeGb).toBe(12.5);
    expect(parseBenchOptions(["--min-free-gb=8"], env).minFreeGb).toBe(8);
    for (const bad of ["0", "-1", "lots"]) {
      expect(() => parseBenchOptions(["--min-free-gb", bad], env)).toThrow(
        new BenchUsageError("--min-free-gb must be a positive number"),
      );
    }
    expect(() => parseBenchOptions(["--min-free-gb"], env)).toThrow(
      new BenchUsageError("--min-free-gb needs a value"),
    );
  });
});
