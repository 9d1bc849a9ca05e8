import { sql } from "drizzle-orm";
import { profiles } from "../../db/schema";

/**
 * The columns a profile row takes from the stored profile record (contract A3): null names, email
 * and avatar and `{}` properties for a visitor without one, as anonymous visitors are.
 */
export const profileRecordColumns = {
  first_name: profiles.firstName,
  last_name: profiles.lastName,
  email: profiles.email,
  avatar: profiles.avatar,
  properties: sql<Record<string, unknown>>`coalesce(${profiles.properties}, '{}'::jsonb)`,
};

/** The row's fixed fields, the same on every profile row. */
export const NO_GROUPS = { groups: [] as string[] };
