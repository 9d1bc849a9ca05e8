import type { StandardSchemaV1 } from "@standard-schema/spec";
import { type ConversionConfig, toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { ApiError, type FieldError } from "./errors";

function issuePath(issue: StandardSchemaV1.Issue): string {
  return (issue.path ?? [])
    .map((segment) => String(typeof segment === "object" ? segment.key : segment))
    .join("/");
}

/** Turns Standard Schema issues into the `errors` list of a 400 problem. */
export function toFieldErrors(issues: ReadonlyArray<StandardSchemaV1.Issue>, prefix = ""): FieldError[] {
  return issues.map((issue) => {
    const path = issuePath(issue);
    return { path: [prefix, path].filter(Boolean).join("/"), message: issue.message };
  });
}

/** A value the caller actually gave: an empty or blank query value counts as absent. */
export function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

export const NUL_MESSAGE = "text must not contain the NUL character (U+0000)";

/**
 * The path (as valibot path items, so it reads like a schema's: `filters/0/value/1`) to the first
 * string in `value` (parsed JSON) that holds a NUL character; [] for `value` itself, undefined
 * when there is none.
 */
function nulCharacterPath(value: unknown): v.IssuePathItem[] | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? [] : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const below = nulCharacterPath(item);
    if (below === undefined) continue;
    const step: v.IssuePathItem = Array.isArray(value)
      ? { type: "array", origin: "value", input: value, key: Number(key), value: item }
      : { type: "object", origin: "value", input: value as Record<string, unknown>, key, value: item };
    return [step, ...below];
  }
  return undefined;
}

export function validationError(errors: FieldError[]): ApiError {
  const first = errors[0];
  const detail = first ? `${first.path ? `${first.path}: ` : ""}${first.message}` : "Invalid request.";
  return new ApiError({ code: "VALIDATION_FAILED", detail, errors });
}

/**
 * The schemas of the JSON query parameters by component name (`FilterList`…): the OpenAPI document
 * describes each such parameter by its schema (`content: application/json`).
 */
export const JSON_QUERY_SCHEMAS = new Map<string, v.GenericSchema>();

/** The metadata key naming a JSON query parameter's component schema. */
export const JSON_SCHEMA_NAME = "x-json-schema";

/**
 * A query parameter that carries URL-encoded JSON. It is documented as what travels on the wire,
 * a string; the parsing happens in a raw transform (which the JSON Schema converter skips), and
 * each issue keeps its own path so the enclosing object prefixes it (`series/0/filters/1/operator`).
 */
export function jsonQueryParam<TOutput>(options: {
  param: string;
  schema: v.GenericSchema<unknown, TOutput>;
  /** The component name its schema has in the OpenAPI document. */
  schemaName: string;
  /** What the JSON should be, for the malformed-JSON message. */
  expected: string;
  description: string;
  example: string;
}) {
  const { param, schema, schemaName, expected, description, example } = options;
  JSON_QUERY_SCHEMAS.set(schemaName, schema);
  const parsed = v.pipe(
    v.string(`${param} must be one URL-encoded JSON string`),
    v.parseJson(undefined, `${param} is not valid JSON; expected ${expected}`),
    // A NUL escaped as \u0000 decodes into text Postgres cannot hold: a 400 where it sits.
    v.rawCheck(({ dataset, addIssue }) => {
      const path = dataset.typed ? nulCharacterPath(dataset.value) : undefined;
      if (path !== undefined) {
        const [first, ...rest] = path;
        addIssue({ message: NUL_MESSAGE, path: first ? [first, ...rest] : undefined });
      }
    }),
    schema,
  );
  return v.pipe(
    v.string(`${param} must be one URL-encoded JSON string`),
    v.description(description),
    v.examples([example]),
    v.metadata({ contentMediaType: "application/json", [JSON_SCHEMA_NAME]: schemaName }),
    v.rawTransform<string, TOutput>(({ dataset, config, addIssue, NEVER }) => {
      const result = v.safeParse(parsed, dataset.value, {
        lang: config.lang,
        abortEarly: config.abortEarly,
        abortPipeEarly: config.abortPipeEarly,
      });
      if (result.success) return result.output;
      for (const issue of result.issues) {
        addIssue({
          message: issue.message,
          input: issue.input,
          expected: issue.expected ?? undefined,
          received: issue.received,
          path: issue.path,
        });
      }
      return NEVER;
    }),
  );
}

/**
 * The JSON Schema of what a caller writes for `schema` (input mode: a pipe stops at its first
 * transform), without `$schema`, for the OpenAPI document; actions it cannot express are left out.
 */
export function inputJsonSchema(
  schema: v.GenericSchema,
  config: Pick<ConversionConfig, "target" | "overrideSchema"> = {},
): Record<string, unknown> {
  const { $schema: _, ...json } = toJsonSchema(schema, { errorMode: "ignore", typeMode: "input", ...config });
  return json;
}
