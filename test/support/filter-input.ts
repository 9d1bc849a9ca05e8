import * as v from "valibot";
import { type Filter, FiltersParam, normalizeFilters } from "../../src/lib/filter-parser";
import { toFieldErrors } from "../../src/lib/validation";

/** Filters as a request carries them, parsed through the real query parameter schema. */

export interface FilterInput {
  name: string;
  operator: string;
  value?: unknown;
}

export const Query = v.object({ filters: FiltersParam });

/** Validates as the route validator does: through Standard Schema, issues mapped by toFieldErrors. */
function validateQuery(query: Record<string, string>) {
  const result = Query["~standard"].validate(query);
  if (result instanceof Promise) throw new Error("the filters schema must validate synchronously");
  return result;
}

export function parse(list: FilterInput[]): Filter[] {
  const result = validateQuery({ filters: JSON.stringify(list) });
  if (result.issues) throw new Error(JSON.stringify(toFieldErrors(result.issues)));
  return normalizeFilters(result.value.filters);
}

export function fieldErrors(filters: string | undefined) {
  const result = validateQuery(filters === undefined ? {} : { filters });
  return result.issues ? toFieldErrors(result.issues) : [];
}

export const paths = (filters: string) => fieldErrors(filters).map((error) => error.path);
