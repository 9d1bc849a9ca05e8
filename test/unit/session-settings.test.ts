import { describe, expect, it } from "vitest";
import { isPooledEndpoint, sessionSettings } from "../../src/db/client";

describe("API session settings", () => {
  it("set the statement timeout and JIT off on a direct connection", () => {
    const url = "postgres://api:pw@ep-cool-name-123456.eu-central-1.db.example/app";
    expect(sessionSettings(url, { statementTimeoutMs: 10_000 })).toEqual([
      "SET statement_timeout = 10000",
      "SET jit = off",
    ]);
    expect(sessionSettings(url, { statementTimeoutMs: 0 })).toEqual(["SET jit = off"]);
    expect(sessionSettings("postgres://postgres@127.0.0.1:5432/x", { statementTimeoutMs: 2.9 })).toEqual([
      "SET statement_timeout = 2",
      "SET jit = off",
    ]);
  });

  it("are left to the role on a pooled endpoint, where a session SET would reach other clients", () => {
    const pooled = "postgres://api:pw@ep-cool-name-123456-pooler.eu-central-1.db.example/app";
    expect(isPooledEndpoint(pooled)).toBe(true);
    expect(sessionSettings(pooled, { statementTimeoutMs: 10_000 })).toEqual([]);
    expect(isPooledEndpoint("postgres://postgres@127.0.0.1:5432/x")).toBe(false);
    expect(isPooledEndpoint("not a url")).toBe(false);
  });
});
