import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../../env";
import { ApiError } from "../../../lib/errors";
import { useDatabase } from "../../../middleware/database";
import { hasEventName } from "../../../queries/discovery/names";

/**
 * What every discovery route takes (contract A2): the whole history, so window parameters are
 * ignored (clients that send a `range` with every call keep working) and `filters`, which it
 * cannot honour, is a 400.
 */
export const DiscoveryParams = {
  filters: v.optional(
    v.pipe(
      v.string(),
      v.description("Not accepted: discovery covers the whole history and cannot apply filters (400)."),
      v.check(
        () => false,
        "discovery covers the whole stored history and cannot apply filters; leave filters out",
      ),
    ),
  ),
};

/** `eventName` or its alias `event`. */
export const EventNameParams = {
  eventName: v.optional(v.pipe(v.string(), v.minLength(1), v.description("Only events of this name."))),
  event: v.optional(v.pipe(v.string(), v.minLength(1), v.description("Alias of `eventName`."))),
};

/** The event name asked for, checked against the catalogue: a name never stored is a 400. */
export async function requestedEventName(
  c: Context<AppEnv>,
  query: { eventName?: string; event?: string },
): Promise<string | undefined> {
  const name = query.eventName ?? query.event;
  if (name === undefined) return undefined;
  if (!(await hasEventName(useDatabase(c), c.get("project").id, name))) {
    const param = query.eventName === undefined ? "event" : "eventName";
    throw ApiError.invalid(
      param,
      `${param}: this project has never stored an event named ${JSON.stringify(name)}`,
    );
  }
  return name;
}
