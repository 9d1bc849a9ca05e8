import { describe, expect, it } from "vitest";
import { isRetryableFailure, postgresError } from "../../src/db/connection-errors";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });
/** As drizzle wraps a driver error: the SQLSTATE sits in the cause. */
const wrapped = (cause: unknown) => new Error("Failed query: select 1", { cause });

describe("retryable database failures", () => {
  it.each([
    ["a terminated session (57P01)", withCode("57P01")],
    ["too many clients (53300)", withCode("53300")],
    ["a database refusing connections (55000)", withCode("55000")],
    ["a connection failure (08006)", withCode("08006")],
    ["a reset socket", withCode("ECONNRESET")],
    ["a connection that ended", new Error("Connection terminated unexpectedly")],
  ])("%s is retried, also wrapped", (_, error) => {
    expect(isRetryableFailure(error)).toBe(true);
    expect(isRetryableFailure(wrapped(error))).toBe(true);
  });

  it.each([
    ["a statement timeout (57014)", withCode("57014", "canceling statement due to statement timeout")],
    ["a syntax error (42601)", withCode("42601")],
    ["a bad value (22P02)", withCode("22P02")],
    ["a missing database (3D000)", withCode("3D000")],
    ["a plain error", new Error("boom")],
    ["a thrown string", "network down"],
  ])("%s is not", (_, error) => {
    expect(isRetryableFailure(error)).toBe(false);
    expect(isRetryableFailure(wrapped(error))).toBe(false);
  });

  it("find the SQLSTATE under the wrapper", () => {
    expect(postgresError(wrapped(withCode("53300", "sorry, too many clients")))).toEqual({
      code: "53300",
      message: "sorry, too many clients",
    });
    expect(postgresError(new Error("no code"))).toBeUndefined();
  });
});
