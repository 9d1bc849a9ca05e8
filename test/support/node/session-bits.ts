import { sql } from "drizzle-orm";
import type { Database } from "../../../src/db/client";
import { BREAKDOWN_DIMENSIONS, DIMENSION_PREFIXES } from "../../../src/lib/dimensions";
import { startOfLocalDay } from "../../../src/lib/timezone";

/**
 * The bit strings per day over sessions (session_day_bits, session_day_slices, page_day_bits,
 * page_day_slices), computed in TypeScript from a project's `sessions` rows and read back as
 * stored, both as maps from a key (day, block, then the string's group) to the string's text ('0'
 * and '1'), so a test can compare them whole.
 */

type SessionRow = Record<string, string | number | boolean | null>;

/** The measures of the slices, as refresh_session_bits sums them. */
const MEASURES: Array<[string, (row: SessionRow) => bigint]> = [
  ["bounce", (row) => (row.is_bounce ? 1n : 0n)],
  ["timed", (row) => (BigInt(String(row.duration_ms)) > 0n ? 1n : 0n)],
  ["duration_ms", (row) => max0(BigInt(String(row.duration_ms)))],
  ["screen_views", (row) => max0(BigInt(String(row.screen_view_count)))],
  ["revenue", (row) => max0(BigInt(String(row.revenue)))],
  ["refunds", (row) => max0(-BigInt(String(row.revenue)))],
];

const max0 = (value: bigint) => (value > 0n ? value : 0n);
const notSet = (value: unknown) => (value === null || value === "" ? null : String(value));

/** A string of `width` bits with the bits of `ordinals` set. */
function bitText(ordinals: readonly number[], width: number): string {
  const bits = Array.from({ length: width }, () => "0");
  for (const ordinal of ordinals) bits[ordinal] = "1";
  return bits.join("");
}

function add(groups: Map<string, number[]>, key: string, ordinal: number): void {
  const ordinals = groups.get(key) ?? [];
  ordinals.push(ordinal);
  groups.set(key, ordinals);
}

/**
 * Each session's paths and origins (its pages', "" and NULL as not set: NULL), event names and
 * property values (its property rows but the marks, under `property:` and the path as JSON): the
 * multi-valued dimensions. The test traffic stays within the bounds of a day's property strings.
 */
async function heldValues(
  db: Database,
  projectId: string,
): Promise<Map<string, Array<[string, string | null]>>> {
  const result = await db.execute<{
    session_id: string;
    dimension: string;
    path: string[] | null;
    name: string | null;
  }>(sql`
    select distinct session_id, 'path' as dimension, null::text[] as path, nullif(path, '') as name from session_pages where project_id = ${projectId}
    union all
    select distinct session_id, 'origin', null::text[], nullif(origin, '') from session_pages where project_id = ${projectId}
    union all
    select distinct session_id, 'name', null::text[], name from session_names where project_id = ${projectId} and name <> ''
    union all
    select distinct session_id, 'property', path, value from session_properties where project_id = ${projectId} and value is not null`);
  const held = new Map<string, Array<[string, string | null]>>();
  for (const row of result.rows) {
    const dimension = row.path ? `property:${JSON.stringify(row.path)}` : row.dimension;
    held.set(row.session_id, [...(held.get(row.session_id) ?? []), [dimension, row.name]]);
  }
  return held;
}

/** A project's sessions, each with its local day, and the paths and names each holds. */
async function sessionsByDay(db: Database, projectId: string, timezone: string) {
  const result = await db.execute<SessionRow>(sql`select * from sessions where project_id = ${projectId}`);
  const held = await heldValues(db, projectId);
  const rows = result.rows.map((row) => ({
    row,
    day: startOfLocalDay(new Date(String(row.started_at)).getTime(), timezone),
  }));
  return { rows, held };
}

/** The session numbers per block of a day's strings in this database (src/db/routines/day_block_bits.sql). */
async function dayBlockBits(db: Database): Promise<number> {
  const result = await db.execute<{ bits: number }>(sql`select day_block_bits() as bits`);
  return Number(result.rows[0]?.bits);
}

/** The key of block `block` of day `day`. */
const blockKey = (day: number, block: number) => JSON.stringify([day, block]);

/**
 * The numbers the strings give a project's sessions (session_day_ordinals): each session's day and
 * ordinal, each block's string width, read from its stored strings (every string of a block has
 * the same width; a block without one gets its highest offset plus one, rounded up to whole
 * bytes), and the numbers per block.
 */
export async function storedDayNumbers(db: Database, projectId: string) {
  const numbers = await db.execute<{ session_id: string; day: string; ordinal: number }>(
    sql`select session_id, day, ordinal from session_day_ordinals where project_id = ${projectId}`,
  );
  const widths = await db.execute<{ day: string; block: number; width: number }>(sql`
    select distinct day, block, length(sessions) as width from (
      select day, block, sessions from session_day_bits where project_id = ${projectId}
      union all select day, block, sessions from session_day_slices where project_id = ${projectId}
      union all select day, block, sessions from page_day_bits where project_id = ${projectId}
      union all select day, block, sessions from page_day_slices where project_id = ${projectId}
    ) as strings`);
  const ordinalOf = new Map(
    numbers.rows.map((row) => [
      row.session_id,
      { day: new Date(row.day).getTime(), ordinal: Number(row.ordinal) },
    ]),
  );
  const widthOf = new Map<string, number[]>();
  for (const row of widths.rows) {
    const key = blockKey(new Date(row.day).getTime(), Number(row.block));
    widthOf.set(key, [...(widthOf.get(key) ?? []), Number(row.width)]);
  }
  return { ordinalOf, widthOf, blockBits: await dayBlockBits(db) };
}

/**
 * What is wrong with the numbers of a project's sessions, as messages (none when right): each
 * session has one number, in its local day, no two sessions of a day share one, and every string
 * of a block has one width, with a bit for each number of the block.
 */
export async function dayNumberProblems(
  db: Database,
  projectId: string,
  timezone: string,
): Promise<string[]> {
  const { rows: dated } = await sessionsByDay(db, projectId, timezone);
  const { ordinalOf, widthOf, blockBits } = await storedDayNumbers(db, projectId);
  const problems: string[] = [];
  if (ordinalOf.size !== dated.length)
    problems.push(`${ordinalOf.size} numbers for ${dated.length} sessions`);
  const taken = new Set<string>();
  for (const { row, day } of dated) {
    const number = ordinalOf.get(String(row.id));
    if (number === undefined || number.day !== day) {
      problems.push(`session ${row.id} is numbered in ${number?.day} rather than ${day}`);
      continue;
    }
    const place = JSON.stringify([day, number.ordinal]);
    if (taken.has(place)) problems.push(`two sessions are number ${number.ordinal} of ${day}`);
    taken.add(place);
    const block = Math.floor(number.ordinal / blockBits);
    const widths = widthOf.get(blockKey(day, block)) ?? [];
    if (widths.length > 1)
      problems.push(`the strings of ${day} block ${block} are ${widths.join(" and ")} bits long`);
    if (widths.length === 1 && (widths[0] ?? 0) <= number.ordinal % blockBits)
      problems.push(`no bit of ${day} block ${block} for ${number.ordinal}`);
  }
  return [...new Set(problems)];
}

/**
 * Each block of each local day: its sessions, each with its offset in the block, and the block's
 * string width.
 */
async function numberedBlocks(
  db: Database,
  projectId: string,
  dated: ReadonlyArray<{ row: SessionRow; day: number }>,
) {
  const { ordinalOf, widthOf, blockBits } = await storedDayNumbers(db, projectId);
  const blocks = new Map<
    string,
    { day: number; block: number; sessions: Array<{ row: SessionRow; offset: number }>; width: number }
  >();
  for (const { row, day } of dated) {
    const ordinal = ordinalOf.get(String(row.id))?.ordinal ?? -1;
    const block = Math.floor(ordinal / blockBits);
    const key = blockKey(day, block);
    const entry = blocks.get(key) ?? { day, block, sessions: [], width: 0 };
    entry.sessions.push({ row, offset: ordinal - block * blockBits });
    blocks.set(key, entry);
  }
  for (const [key, entry] of blocks) {
    const highest = Math.max(...entry.sessions.map((session) => session.offset));
    entry.width = widthOf.get(key)?.[0] ?? Math.ceil((highest + 1) / 8) * 8;
  }
  return blocks.values();
}

/** Calls `set` with each set bit of `value` (its slices). */
function eachSetBit(value: bigint, set: (slice: number) => void): void {
  for (let slice = 0; value >> BigInt(slice) > 0n; slice++) if ((value >> BigInt(slice)) & 1n) set(slice);
}

/**
 * What the strings of a project must be, over the numbers its sessions have in their local day:
 * keyed by day, block and value (or measure and slice).
 */
export async function expectedBitStrings(db: Database, projectId: string, timezone: string) {
  const { rows: dated, held } = await sessionsByDay(db, projectId, timezone);
  const values = new Map<string, string>();
  const slices = new Map<string, string>();
  for (const { day, block, sessions: numbered, width } of await numberedBlocks(db, projectId, dated)) {
    const valueGroups = new Map<string, number[]>();
    const sliceGroups = new Map<string, number[]>();
    for (const { row, offset } of numbered) {
      for (const dimension of BREAKDOWN_DIMENSIONS) {
        const prefixedBy = DIMENSION_PREFIXES[dimension];
        const prefix = prefixedBy ? notSet(row[prefixedBy]) : null;
        add(valueGroups, JSON.stringify([day, block, dimension, notSet(row[dimension]), prefix]), offset);
      }
      for (const [dimension, name] of held.get(String(row.id)) ?? []) {
        add(valueGroups, JSON.stringify([day, block, dimension, name, null]), offset);
      }
      for (const [measure, measureOf] of MEASURES) {
        eachSetBit(measureOf(row), (slice) =>
          add(sliceGroups, JSON.stringify([day, block, measure, slice]), offset),
        );
      }
    }
    for (const [key, ordinals] of valueGroups) values.set(key, bitText(ordinals, width));
    for (const [key, ordinals] of sliceGroups) slices.set(key, bitText(ordinals, width));
  }
  return { values, slices };
}

/** The strings stored for a project, keyed like expectedBitStrings. */
export async function storedBitStrings(db: Database, projectId: string) {
  const values = await db.execute<{
    day: string;
    block: number;
    dimension: string;
    name: string | null;
    prefix: string | null;
    bits: string;
  }>(sql`
    select day, block, dimension, name, prefix, sessions::text as bits from session_day_bits where project_id = ${projectId}`);
  const slices = await db.execute<{
    day: string;
    block: number;
    measure: string;
    slice: number;
    bits: string;
  }>(sql`
    select day, block, measure, slice, sessions::text as bits from session_day_slices where project_id = ${projectId}`);
  const dayOf = (day: string) => new Date(day).getTime();
  return {
    values: new Map(
      values.rows.map((row) => [
        JSON.stringify([dayOf(row.day), Number(row.block), row.dimension, row.name, row.prefix]),
        row.bits,
      ]),
    ),
    slices: new Map(
      slices.rows.map((row) => [
        JSON.stringify([dayOf(row.day), Number(row.block), row.measure, Number(row.slice)]),
        row.bits,
      ]),
    ),
  };
}

/** The measures of the page slices, as refresh_session_bits sums them from a session's page. */
const PAGE_MEASURES: Array<[string, (page: SessionRow) => bigint]> = [
  ["repeat_views", (page) => BigInt(Number(page.views) - 1)],
  ["bounce", (page) => (page.is_bounce ? 1n : 0n)],
  ["duration_ms", (page) => BigInt(String(page.duration_ms))],
  ["timed_views", (page) => BigInt(Number(page.timed_views))],
];

/**
 * What the page strings of a project must be (page_day_bits keyed by day, origin, path and title;
 * page_day_slices by day, origin, path, measure and slice), from its sessions' screened pages.
 */
export async function expectedPageStrings(db: Database, projectId: string, timezone: string) {
  const { rows: dated } = await sessionsByDay(db, projectId, timezone);
  const numbered = new Map<string, { day: number; block: number; offset: number; size: number }>();
  for (const { day, block, sessions, width } of await numberedBlocks(db, projectId, dated))
    for (const { row, offset } of sessions) numbered.set(String(row.id), { day, block, offset, size: width });
  const pages = await db.execute<SessionRow>(
    sql`select * from session_pages where project_id = ${projectId} and views > 0`,
  );
  const titleGroups = new Map<string, number[]>();
  const sliceGroups = new Map<string, number[]>();
  const sizes = new Map<string, number>();
  for (const page of pages.rows) {
    const { day, block, offset, size } = numbered.get(String(page.session_id)) ?? {
      day: 0,
      block: 0,
      offset: -1,
      size: 0,
    };
    const key = JSON.stringify([day, block, page.origin, page.path, page.title]);
    add(titleGroups, key, offset);
    sizes.set(key, size);
    for (const [measure, measureOf] of PAGE_MEASURES) {
      eachSetBit(measureOf(page), (slice) => {
        const sliceKey = JSON.stringify([day, block, page.origin, page.path, measure, slice]);
        add(sliceGroups, sliceKey, offset);
        sizes.set(sliceKey, size);
      });
    }
  }
  const texts = (groups: Map<string, number[]>) =>
    new Map([...groups].map(([key, ordinals]) => [key, bitText(ordinals, sizes.get(key) ?? 0)]));
  return { titles: texts(titleGroups), slices: texts(sliceGroups) };
}

/** The page strings stored for a project, keyed like expectedPageStrings. */
export async function storedPageStrings(db: Database, projectId: string) {
  const titles = await db.execute<SessionRow & { day: string; bits: string }>(sql`
    select day, block, origin, path, title, sessions::text as bits from page_day_bits where project_id = ${projectId}`);
  const slices = await db.execute<SessionRow & { day: string; bits: string }>(sql`
    select day, block, origin, path, measure, slice, sessions::text as bits from page_day_slices where project_id = ${projectId}`);
  const dayOf = (day: string) => new Date(day).getTime();
  return {
    titles: new Map(
      titles.rows.map((row) => [
        JSON.stringify([dayOf(row.day), Number(row.block), row.origin, row.path, row.title]),
        row.bits,
      ]),
    ),
    slices: new Map(
      slices.rows.map((row) => [
        JSON.stringify([
          dayOf(row.day),
          Number(row.block),
          row.origin,
          row.path,
          row.measure,
          Number(row.slice),
        ]),
        row.bits,
      ]),
    ),
  };
}

/**
 * The visitors (profile ids, sorted) of each (day, dimension, value) and the visitors with several
 * values of a dimension in a day, computed from a project's sessions.
 */
export async function expectedVisitorSets(db: Database, projectId: string, timezone: string) {
  const { rows: dated, held } = await sessionsByDay(db, projectId, timezone);
  const values = new Map<string, Set<string>>();
  const seen = new Map<string, Set<string | null>>();
  // Per (day, visitor): its sessions, and per path or name how many of them hold it.
  const sessionsOf = new Map<string, string[]>();
  const holding = new Map<string, number>();
  for (const { row, day } of dated) {
    const profile = String(row.profile_id);
    for (const dimension of BREAKDOWN_DIMENSIONS) {
      const key = JSON.stringify([day, dimension, notSet(row[dimension])]);
      values.set(key, (values.get(key) ?? new Set()).add(profile));
      const visitorDay = JSON.stringify([day, dimension, profile]);
      seen.set(visitorDay, (seen.get(visitorDay) ?? new Set()).add(notSet(row[dimension])));
    }
    const visitorDay = JSON.stringify([day, profile]);
    sessionsOf.set(visitorDay, [...(sessionsOf.get(visitorDay) ?? []), String(row.id)]);
    for (const [dimension, name] of held.get(String(row.id)) ?? []) {
      const key = JSON.stringify([day, dimension, name]);
      values.set(key, (values.get(key) ?? new Set()).add(profile));
      const value = JSON.stringify([day, profile, dimension, name]);
      holding.set(value, (holding.get(value) ?? 0) + 1);
    }
  }
  // A listed visitor as its profile and its sessions of the day.
  const listed = (day: number, profile: string) =>
    `${profile}: ${[...(sessionsOf.get(JSON.stringify([day, profile])) ?? [])].sort().join(" ")}`;
  const mixed = new Map<string, Set<string>>();
  for (const [value, count] of holding) {
    const [day, profile, dimension] = JSON.parse(value) as [number, string, string];
    if (count === sessionsOf.get(JSON.stringify([day, profile]))?.length) continue;
    const key = JSON.stringify([day, dimension]);
    mixed.set(key, (mixed.get(key) ?? new Set()).add(listed(day, profile)));
  }
  for (const [visitorDay, names] of seen) {
    if (names.size < 2) continue;
    const [day, dimension, profile] = JSON.parse(visitorDay) as [number, string, string];
    const key = JSON.stringify([day, dimension]);
    mixed.set(key, (mixed.get(key) ?? new Set()).add(listed(day, profile)));
  }
  return { values: sortedSets(values), mixed: sortedSets(mixed) };
}

/** The visitor strings and mixed visitors stored for a project, decoded to profile ids like expectedVisitorSets. */
export async function storedVisitorSets(db: Database, projectId: string) {
  const ordinals = await db.execute<{ ordinal: number; profile_id: string }>(
    sql`select ordinal, profile_id from visitor_ordinals where project_id = ${projectId}`,
  );
  const profileOf = new Map(ordinals.rows.map((row) => [Number(row.ordinal), row.profile_id]));
  const strings = await db.execute<{
    day: string;
    dimension: string;
    name: string | null;
    chunk: number;
    bits: string;
  }>(sql`
    select day, dimension, name, chunk, visitors::text as bits from visitor_day_bits where project_id = ${projectId}`);
  const values = new Map<string, Set<string>>();
  for (const row of strings.rows) {
    const key = JSON.stringify([new Date(row.day).getTime(), row.dimension, row.name]);
    const set = values.get(key) ?? new Set<string>();
    [...row.bits].forEach((bit, offset) => {
      if (bit === "1") set.add(profileOf.get(Number(row.chunk) * row.bits.length + offset) ?? "unnumbered");
    });
    values.set(key, set);
  }
  const listed = await db.execute<{ day: string; dimension: string; ordinal: number; sessions: number[] }>(
    sql`select day, dimension, ordinal, sessions from visitor_day_mixed where project_id = ${projectId}`,
  );
  // The sessions of a listed visitor, by their day ordinals.
  const sessionAt = new Map<string, string>();
  for (const [sessionId, { day, ordinal }] of (await storedDayNumbers(db, projectId)).ordinalOf)
    sessionAt.set(JSON.stringify([day, ordinal]), sessionId);
  const mixed = new Map<string, Set<string>>();
  for (const row of listed.rows) {
    const day = new Date(row.day).getTime();
    const key = JSON.stringify([day, row.dimension]);
    const sessions = row.sessions.map(
      (ordinal) => sessionAt.get(JSON.stringify([day, ordinal])) ?? "unnumbered",
    );
    const visitor = `${profileOf.get(Number(row.ordinal)) ?? "unnumbered"}: ${sessions.sort().join(" ")}`;
    mixed.set(key, (mixed.get(key) ?? new Set()).add(visitor));
  }
  return { values: sortedSets(values), mixed: sortedSets(mixed) };
}

const sortedSets = (sets: Map<string, Set<string>>) =>
  new Map([...sets].map(([key, set]) => [key, [...set].sort()]));
