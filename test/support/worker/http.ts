import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { connect } from "../factories";

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, otherwise the text. Always read, so storage stays isolated. */
  body: T;
}

/** Calls the Worker's own fetch handler, as a client on the network would. */
export async function call<T = unknown>(path: string, init: RequestInit = {}): Promise<ApiResponse<T>> {
  const response = await exports.default.fetch(new Request(`http://api.test${path}`, init));
  const text = await response.text();
  const type = response.headers.get("content-type") ?? "";
  const body = (type.includes("json") && text ? JSON.parse(text) : text) as T;
  return { status: response.status, headers: response.headers, body };
}

/** A database handle for factories; close it in afterAll. */
export function testDatabase() {
  return connect(env.DATABASE_URL, env.NEON_WS_PROXY);
}

/** Asserts a complete RFC 9457 problem response (contract section 8). */
export function expectProblem(response: ApiResponse, status: number, code: string, path?: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toBeTruthy();
  const body = response.body as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(
    ["code", "detail", "error", "errors", "message", "requestId", "status", "title", "type"].sort(),
  );
  expect(body).toMatchObject({ status, code, requestId, error: body.title, message: body.detail });
  expect(typeof body.detail).toBe("string");
  if (path !== undefined) {
    expect((body.errors as Array<{ path: string }>).map((error) => error.path)).toContain(path);
  }
}

/** A query string: undefined values left out, an array value as the key repeated. */
export function queryString(params: Record<string, string | string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of value === undefined ? [] : Array.isArray(value) ? value : [value])
      search.append(key, item);
  }
  return search.toString();
}

/** Every row of a paged listing: `page(cursor)` from no cursor on, following `X-Next-Cursor`. */
export async function walkPages<T>(
  page: (cursor: string | undefined) => Promise<ApiResponse<T[]>>,
): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const response = await page(cursor);
    expect(response.status).toBe(200);
    rows.push(...response.body);
    cursor = response.headers.get("x-next-cursor") ?? undefined;
    if (cursor === undefined) return rows;
    expect(response.headers.get("link")).toContain(`cursor=${encodeURIComponent(cursor)}`);
  }
  throw new Error("more than 200 pages");
}
