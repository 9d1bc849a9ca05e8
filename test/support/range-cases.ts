import { expect } from "vitest";
import { ApiError } from "../../src/lib/errors";
import { type RangeInput, resolveRange } from "../../src/lib/range";

// Shared by the range tests (test/unit/range.test.ts, range-buckets.test.ts). Every expected value in
// them was worked out by hand from the 2026 tz rules, never by the code under test.

export const NOW = new Date("2026-11-21T10:17:42.123Z"); // a Saturday; Oslo is on CET (+01:00), New York on EST (-05:00)
export const HOUR = 3_600_000;
export const iso = (ms: number) => new Date(ms).toISOString();
export const isoList = (list: number[]) => list.map(iso);
export const at = (text: string) => Date.parse(text);

export function resolve(input: Partial<RangeInput>) {
  return resolveRange({ timezone: "UTC", now: NOW, ...input });
}

export function apiError(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

export function expectInvalid(run: () => unknown, path: string): ApiError {
  const error = apiError(run);
  expect(error.status).toBe(400);
  expect(error.code).toBe("VALIDATION_FAILED");
  expect(error.errors.map((e) => e.path)).toEqual([path]);
  return error;
}
