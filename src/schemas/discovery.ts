import * as v from "valibot";

/** The answers of the discovery routes (contract A2); the TypeScript types derive from them. */

export const EventPropertiesResponse = v.pipe(
  v.object({
    columns: v.pipe(v.array(v.string()), v.description("The top-level event columns, always all of them.")),
    properties: v.array(
      v.object({
        property_key: v.pipe(v.string(), v.description("Flattened key (`a.b`, `items.0.sku`).")),
        event_name: v.string(),
      }),
    ),
  }),
  v.metadata({ ref: "EventPropertiesResponse" }),
);

export const PropertyValuesResponse = v.pipe(
  v.object({
    event: v.pipe(v.nullable(v.string()), v.description("The `eventName` given, or null.")),
    property: v.pipe(v.string(), v.description("`propertyKey` as sent.")),
    values: v.pipe(
      v.array(v.string()),
      v.description("Distinct set value texts, by the number of events carrying them, then text."),
    ),
    counts: v.optional(
      v.pipe(
        v.array(v.object({ value: v.string(), count: v.number() })),
        v.description("With `counts=true`: each value's number of events over the whole history."),
      ),
    ),
  }),
  v.metadata({ ref: "PropertyValuesResponse" }),
);

export type EventPropertiesBody = v.InferOutput<typeof EventPropertiesResponse>;
export type PropertyValuesBody = v.InferOutput<typeof PropertyValuesResponse>;
