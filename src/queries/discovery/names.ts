import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { eventNameCatalogue } from "../../db/schema";
import type { Page } from "../insights/model";
import { pageWithTotal, toNumber } from "../sql-helpers";

/**
 * The project's event names matching `search` (a case-insensitive literal substring), by events
 * over the whole history then name, one page of them and how many match: from the catalogue.
 */
export async function eventNames(
  db: Database,
  projectId: string,
  search: string | undefined,
  page: Page,
): Promise<{ total: number; names: string[] }> {
  const c = eventNameCatalogue;
  const matching = search === undefined ? sql`` : sql` and strpos(lower(${c.name}), lower(${search})) > 0`;
  const result = await db.execute<{ total: string | number; name: string | null }>(
    pageWithTotal(
      sql`select ${c.name} as name, ${c.events} as events from ${c} where ${c.projectId} = ${projectId}${matching}`,
      sql`events desc, name collate "C"`,
      page,
    ),
  );
  return {
    total: toNumber(result.rows[0]?.total ?? 0),
    names: result.rows.flatMap((row) => (row.name === null ? [] : [row.name])),
  };
}

/** Whether the project has stored an event of this name. */
export async function hasEventName(db: Database, projectId: string, name: string): Promise<boolean> {
  const c = eventNameCatalogue;
  const result = await db.execute(
    sql`select 1 from ${c} where ${c.projectId} = ${projectId} and ${c.name} = ${name} limit 1`,
  );
  return result.rows.length > 0;
}
