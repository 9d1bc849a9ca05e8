import type { OpenAPIV3_1 } from "openapi-types";
import { inputJsonSchema, JSON_QUERY_SCHEMAS, JSON_SCHEMA_NAME } from "../lib/validation";

type Document = OpenAPIV3_1.Document;
/** A parameter or schema as the generator writes it (a JSON object; the fields read are checked). */
type Parameter = Record<string, unknown> & { schema?: Schema };
type Schema = Record<string, unknown>;

/**
 * The JSON Schema of a JSON query parameter's decoded value, as a component. Input mode: what a
 * caller writes (the checks that follow a transform are in the description).
 */
function componentSchema(name: string): Schema {
  const schema = JSON_QUERY_SCHEMAS.get(name);
  if (!schema) throw new Error(`no JSON query schema named ${name}`);
  return inputJsonSchema(schema, { target: "draft-2020-12" });
}

/**
 * Query values travel as text, so the validators read strings; their metadata says what the text
 * carries. This makes the parameters say it too, so a generated client types them:
 * - `integer` and `boolean` parameters lose the text pattern/enum, and their default becomes a
 *   number or a boolean;
 * - a JSON parameter (`filters`, `series`, `breakdowns`) is described by `content:
 *   application/json` with its schema as a named component (OpenAPI 3.1 section 4.8.12.1).
 */
function typeParameter(parameter: Parameter, components: Record<string, Schema>): Parameter {
  const schema = parameter.schema;
  if (!schema) return parameter;
  const jsonSchemaName = schema[JSON_SCHEMA_NAME];
  if (typeof jsonSchemaName === "string") {
    components[jsonSchemaName] ??= componentSchema(jsonSchemaName);
    const { schema: _, ...rest } = parameter;
    const example = Array.isArray(schema.examples) ? schema.examples[0] : undefined;
    const media: Schema = { schema: { $ref: `#/components/schemas/${jsonSchemaName}` } };
    if (typeof example === "string") media.example = JSON.parse(example);
    return { ...rest, content: { "application/json": media } };
  }
  if (schema.type !== "integer" && schema.type !== "boolean") return parameter;
  const { pattern: _pattern, enum: _enum, default: fallback, ...typed } = schema;
  if (typeof fallback === "string") {
    typed.default = schema.type === "integer" ? Number(fallback) : fallback === "true";
  }
  return { ...parameter, schema: typed };
}

/** The generated document with every query parameter typed as its value (see `typeParameter`). */
export function typeQueryParameters(document: Document): Document {
  const components: Record<string, Schema> = {};
  const paths: OpenAPIV3_1.PathsObject = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const typedItem: Record<string, unknown> = { ...item };
    for (const [method, value] of Object.entries(item ?? {})) {
      const operation = value as { parameters?: Parameter[] };
      const parameters = operation.parameters;
      if (!Array.isArray(parameters)) continue;
      typedItem[method] = {
        ...operation,
        parameters: parameters.map((parameter) =>
          "$ref" in parameter ? parameter : typeParameter(parameter, components),
        ),
      };
    }
    paths[path] = typedItem as OpenAPIV3_1.PathItemObject;
  }
  const schemas = {
    ...document.components?.schemas,
    ...(components as OpenAPIV3_1.ComponentsObject["schemas"]),
  };
  return { ...document, paths, components: { ...document.components, schemas } };
}
