import { describe, expect, it } from "vitest";
import { failureLogLine } from "../../src/lib/failure-log";

/** A driver error as drizzle wraps it: the query and its values in the message, the SQLSTATE in the cause. */
function queryFailure(code: string): Error {
  const cause = Object.assign(new Error('sorry, too many clients already for "secret-user"'), { code });
  const error = new Error(
    'Failed query: select * from "clients" where id = $1\nparams: client-id-of-the-caller',
    {
      cause,
    },
  );
  error.name = "DrizzleQueryError";
  return error;
}

describe("failure log lines", () => {
  it("name the SQLSTATE, the error class and where it was thrown; never SQL, values or driver text", () => {
    const line = failureLogLine(
      {
        event: "database_unavailable",
        requestId: "req-1",
        method: "GET",
        route: "/insights/:projectId/*",
        status: 503,
      },
      queryFailure("53300"),
    );
    const parsed = JSON.parse(line);
    expect(parsed).toMatchObject({
      event: "database_unavailable",
      requestId: "req-1",
      method: "GET",
      route: "/insights/:projectId/*",
      status: 503,
      sqlstate: "53300",
      error: "DrizzleQueryError",
    });
    expect(parsed.message).toBeUndefined();
    expect(parsed.frames.length).toBeGreaterThan(0);
    expect(parsed.frames.every((frame: string) => frame.startsWith("at "))).toBe(true);
    expect(line).not.toMatch(/select|clients|client-id-of-the-caller|too many|secret-user/);
  });

  it("keep a programming error's message, with control characters escaped", () => {
    const line = failureLogLine({ event: "unhandled_error" }, new TypeError("bad \u0000\u001b[31m value"));
    expect([...line].some((char) => char.charCodeAt(0) < 0x20)).toBe(false);
    expect(JSON.parse(line)).toMatchObject({ error: "TypeError", message: "bad \u0000\u001b[31m value" });
    expect(JSON.parse(line).sqlstate).toBeUndefined();
  });

  it("say what a thrown non-error was, without its content", () => {
    expect(JSON.parse(failureLogLine({ event: "x" }, "select secret"))).toEqual({
      event: "x",
      error: "string",
      frames: [],
    });
  });
});
