import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { normalizeFilters } from "../../src/lib/filter-parser";
import { fieldErrors, paths, Query } from "../support/filter-input";

describe("FiltersParam", () => {
  const one = (filter: unknown) => JSON.stringify([filter]);

  it("defaults to no filters and normalizes valid input", () => {
    expect(fieldErrors(undefined)).toEqual([]);
    const result = v.parse(Query, {
      filters: JSON.stringify([
        { name: "referrerName", operator: "isNull" },
        { name: "properties.a.b", operator: "gte", value: ["10", "ignored"] },
        { name: "duration", operator: "isNotNull", value: [1] },
      ]),
    });
    expect(normalizeFilters(v.parse(Query, {}).filters)).toEqual([]);
    expect(normalizeFilters(result.filters)).toEqual([
      {
        field: { kind: "column", column: "referrer_name", scope: "session", numeric: false },
        operator: "isNull",
        values: [],
        index: 0,
      },
      {
        field: { kind: "property", path: ["a", "b"], scope: "event" },
        operator: "gte",
        values: ["10", "ignored"],
        index: 1,
      },
      {
        field: { kind: "column", column: "duration", scope: "event", numeric: true },
        operator: "isNotNull",
        values: [],
        index: 2,
      },
    ]);
  });

  it("points at the offending part of the input", () => {
    const valid = { name: "path", operator: "is", value: ["/"] };
    expect(paths("{not json")).toEqual(["filters"]);
    expect(paths("")).toEqual(["filters"]);
    expect(paths('{"name":"path"}')).toEqual(["filters"]);
    expect(paths(JSON.stringify(Array.from({ length: 21 }, () => valid)))).toEqual(["filters"]);
    expect(paths(JSON.stringify(Array.from({ length: 20 }, () => valid)))).toEqual([]);
    expect(paths(one({ ...valid, value: Array.from({ length: 101 }, (_, i) => i) }))).toEqual([
      "filters/0/value",
    ]);
    expect(paths(one({ ...valid, value: Array.from({ length: 100 }, (_, i) => String(i)) }))).toEqual([]);
    expect(paths(JSON.stringify([valid, valid, { ...valid, name: "colour" }]))).toEqual(["filters/2/name"]);
    expect(paths(JSON.stringify([valid, { ...valid, operator: "equals" }]))).toEqual(["filters/1/operator"]);
    expect(paths(one({ ...valid, name: "properties." }))).toEqual(["filters/0/name"]);
    expect(paths(one({ ...valid, name: "properties.a..b" }))).toEqual(["filters/0/name"]);
    expect(paths(one({ ...valid, value: "/" }))).toEqual(["filters/0/value"]);
    expect(paths(one({ ...valid, value: [{ x: 1 }] }))).toEqual(["filters/0/value/0"]);
    expect(paths(one({ ...valid, value: [true] }))).toEqual(["filters/0/value/0"]);
    expect(paths(one({ name: "duration", operator: "gt", value: ["ten"] }))).toEqual(["filters/0/value"]);
    expect(paths(one({ name: "path", operator: "lt", value: [] }))).toEqual(["filters/0/value"]);
    expect(paths(one({ name: "path", operator: "contains" }))).toEqual(["filters/0/value"]);
    expect(paths(one({ name: "duration", operator: "is", value: [10, "abc"] }))).toEqual(["filters/0/value"]);
    expect(paths(JSON.stringify([valid, "path"]))).toEqual(["filters/1"]);
    expect(paths(JSON.stringify([valid, { operator: "is", value: ["x"] }]))).toEqual(["filters/1/name"]);
  });

  it("gives messages that say what is wrong", () => {
    const [unknownName] = fieldErrors(one({ name: "colour", operator: "is", value: ["x"] }));
    expect(unknownName?.message).toContain('"colour"');
    expect(unknownName?.message).toContain("properties.<key>");
    const [operator] = fieldErrors(one({ name: "path", operator: "equals", value: ["x"] }));
    expect(operator?.message).toContain("doesNotContain");
    const [comparison] = fieldErrors(one({ name: "path", operator: "gt", value: ["x", 1] }));
    expect(comparison?.message).toContain("number");
    const [json] = fieldErrors("[{");
    expect(json?.message).toContain("JSON");
  });

  it("accepts numbers as numeric text for comparisons and numeric fields", () => {
    for (const value of [10, "10", "-2.5", "1e3", 0.5, ".5"]) {
      expect(paths(one({ name: "path", operator: "gt", value: [value] }))).toEqual([]);
      expect(paths(one({ name: "revenue", operator: "isNot", value: [value] }))).toEqual([]);
    }
    for (const value of ["", " 10", "10 ", "0x10", "Infinity", "1e99999", "1,5"]) {
      expect(paths(one({ name: "path", operator: "gte", value: [value] }))).toEqual(["filters/0/value"]);
    }
    // Regex patterns on numeric fields are patterns, not numbers.
    expect(paths(one({ name: "duration", operator: "regex", value: ["^1"] }))).toEqual([]);
  });

  it("documents the parameter as a JSON string", () => {
    const schema = toJsonSchema(Query, { errorMode: "ignore" });
    const filters = schema.properties?.filters;
    expect(filters).toMatchObject({ type: "string", default: "[]" });
    expect(JSON.stringify(filters)).toContain("doesNotContain");
    expect(JSON.stringify(filters)).toContain("properties.<key>");
  });
});
