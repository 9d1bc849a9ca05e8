import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Env, ValidationTargets } from "hono";
import { validator } from "hono-openapi";
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

export function validationError(errors: FieldError[]): ApiError {
  const first = errors[0];
  const detail = first ? `${first.path ? `${first.path}: ` : ""}${first.message}` : "Invalid request.";
  return new ApiError({ code: "VALIDATION_FAILED", detail, errors });
}

/**
 * The one request validator of the service. It validates like `hono-openapi`'s validator (and so
 * documents the parameters in the OpenAPI document), but every failure becomes the same 400
 * problem+json through the shared error handler.
 */
export function validate<
  Target extends keyof ValidationTargets,
  Schema extends StandardSchemaV1,
  E extends Env,
>(target: Target, schema: Schema) {
  return validator<Schema, Target, E, string>(target, schema, (result) => {
    if (!result.success) throw validationError(toFieldErrors(result.error));
  });
}
