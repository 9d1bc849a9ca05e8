import { sql } from "drizzle-orm";
import type { Database } from "../db/client";

/** Round-trips to Postgres; throws when it is unreachable. */
export async function pingDatabase(db: Database): Promise<void> {
  await db.execute(sql`select 1`);
}
