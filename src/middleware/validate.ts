import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { ConversionConfig } from "@valibot/to-json-schema";
import type { Env, ValidationTargets } from "hono";
import { validator } from "hono-openapi";
import type * as v from "valibot";
import { inputJsonSchema, toFieldErrors, validationError } from "../lib/validation";

/**
 * How the document describes a schema the converter leaves blank: a required parameter
 * (`v.nonOptional`, which only adds the "is required" message) is its wrapped schema.
 */
const describeRequired: ConversionConfig["overrideSchema"] = ({ valibotSchema }) => {
  if (valibotSchema.type !== "non_optional" || !("wrapped" in valibotSchema)) return undefined;
  return inputJsonSchema(valibotSchema.wrapped as v.GenericSchema, { overrideSchema: describeRequired });
};

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
  return validator<Schema, Target, E, string>(
    target,
    schema,
    (result) => {
      if (!result.success) throw validationError(toFieldErrors(result.error));
    },
    { options: { overrideSchema: describeRequired } },
  );
}
