import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { createClient, createProject, credentialHeaders, type Tenant, type TestClient } from "../factories";
import type { ApiResponse, testDatabase } from "./http";

/** Calls and readers of the event export shared by its test files; expectations stay in each file. */

type TestDatabase = ReturnType<typeof testDatabase>;

/** A project of the tenant's organization with its own read client, so each describe reads its own rows. */
export async function ownProject(
  database: TestDatabase,
  tenant: Tenant,
): Promise<{ projectId: string; client: TestClient }> {
  const projectId = await createProject(database.db, tenant.organizationId);
  const client = await createClient(database.db, {
    type: "read",
    organizationId: tenant.organizationId,
    projectId,
  });
  return { projectId, client };
}

export type Params = Record<string, string | string[] | undefined>;

export function search(params: Params): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      query.append(key, item);
    }
  }
  return query.toString();
}

/**
 * Calls the export. Not `call()`: its JSON detection would parse an NDJSON body
 * (`application/x-ndjson`), which is text to check line by line here.
 */
export async function exportEvents<T = unknown>(
  client: TestClient,
  params: Params,
  init: { headers?: Record<string, string>; method?: string } = {},
): Promise<ApiResponse<T>> {
  const response = await exports.default.fetch(
    new Request(`http://api.test/export/events?${search(params)}`, {
      method: init.method,
      headers: { ...credentialHeaders(client), ...init.headers },
    }),
  );
  // Decoded by hand: workerd warns when `.text()` reads a type it does not know as text.
  const text = new TextDecoder().decode(await response.arrayBuffer());
  const type = response.headers.get("content-type") ?? "";
  const isJson = /^application\/(problem\+)?json\b/.test(type);
  const body = (isJson && text ? JSON.parse(text) : text) as T;
  return { status: response.status, headers: response.headers, body };
}

export interface PageBody {
  meta: {
    count: number;
    limit: number;
    hasMore: boolean;
    next: string | null;
    totalCount?: number;
    pages?: number;
    current?: number;
  };
  data: Array<Record<string, unknown>>;
}

export function parseNdjson(text: string): Array<Record<string, unknown>> {
  expect(text === "" || text.endsWith("\n")).toBe(true);
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * A small RFC 4180 reader, independent of the encoder: quoted cells may hold commas, doubled
 * quotes, CR and LF. An unquoted empty cell reads as null, a quoted one (`""`) as "".
 */
export function parseCsv(text: string): Array<Array<string | null>> {
  const rows: Array<Array<string | null>> = [];
  let row: Array<string | null> = [];
  let i = 0;
  const endRecord = () => {
    rows.push(row);
    row = [];
  };
  while (i < text.length) {
    let cell: string | null;
    if (text[i] === '"') {
      cell = "";
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted cell");
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        cell += text[i];
        i++;
      }
    } else {
      let end = i;
      while (end < text.length && text[end] !== "," && text[end] !== "\r" && text[end] !== "\n") end++;
      const raw = text.slice(i, end);
      if (raw.includes('"')) throw new Error(`bare quote in unquoted cell ${raw}`);
      cell = raw === "" ? null : raw;
      i = end;
    }
    row.push(cell);
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (text.startsWith("\r\n", i)) {
      i += 2;
      endRecord();
      continue;
    }
    if (i >= text.length) {
      endRecord();
      break;
    }
    throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
  return rows;
}

/** The cell a CSV export must hold for a JSON record's value. */
/**
 * The CSV cell of a JSON value. Text a spreadsheet would run as a formula (first character one of
 * `= + - @`, tab or CR, and not a plain number) carries a leading `'` (OWASP's advice).
 */
export function expectCell(cell: string | null, value: unknown): void {
  if (value === null) expect(cell).toBeNull();
  else if (typeof value === "object") expect(JSON.parse(cell ?? "null")).toEqual(value);
  else if (
    typeof value === "string" &&
    "=+-@\t\r".includes(value.charAt(0) || "x") &&
    !/^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value)
  )
    expect(cell).toBe(`'${value}`);
  else expect(cell).toBe(String(value));
}

/** Export order computed independently: createdAt desc, then id desc (uuid order = lowercase hex order). */
export function exportOrder<T extends { id: string; createdAt: Date }>(rows: T[]): T[] {
  return [...rows].sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
}

export const ids = (rows: ReadonlyArray<{ id?: unknown }>) => rows.map((row) => String(row.id));

export const ALWAYS_KEYS = [
  "id",
  "name",
  "deviceId",
  "profileId",
  "sessionId",
  "projectId",
  "createdAt",
  "path",
  "duration",
  "revenue",
  "country",
  "city",
  "os",
  "browser",
];
export const GROUP_KEYS: Record<string, string[]> = {
  profile: ["profile"],
  meta: ["meta"],
  properties: ["properties"],
  geo: ["region", "latitude", "longitude"],
  device: ["device", "brand", "model", "osVersion", "browserVersion"],
  referrer: [
    "origin",
    "referrer",
    "referrerName",
    "referrerType",
    "utmSource",
    "utmMedium",
    "utmCampaign",
    "utmTerm",
    "utmContent",
  ],
};
