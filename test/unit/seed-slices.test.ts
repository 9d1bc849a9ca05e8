import { describe, expect, it } from "vitest";
import { DemoDataGenerator, EVENT_COLUMNS } from "../../scripts/seed/generator";
import { sliceEnds } from "../../scripts/seed/loader";

/**
 * A load in slices (the benchmark's large data sets) writes the same events as a load in one piece:
 * only `ingest_xid`, each slice's transaction id, differs. Sessions never span two slices, so a
 * slice's refresh sees every event of the sessions it derives.
 */

const NOW = new Date("2026-06-15T10:17:00.000Z");
const DAYS = 3;
const EVENTS = 6_000;

const generator = (ingestXid: string) =>
  new DemoDataGenerator({ events: EVENTS, days: DAYS, seed: 7, now: NOW, projects: [["p", 1]], ingestXid });

const rowsOf = (chunks: Iterable<Buffer>) =>
  Buffer.concat([...chunks])
    .toString("utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.split("\t"));

const XID = EVENT_COLUMNS.indexOf("ingest_xid");
const SESSION = EVENT_COLUMNS.indexOf("session_id");
const CREATED = EVENT_COLUMNS.indexOf("created_at");
const withoutXid = (row: string[]) => row.filter((_, i) => i !== XID).join("\t");

describe("the demo data in slices", () => {
  it("ends the slices on the whole hours nearest below equal spans of the range, none for one slice", () => {
    expect(sliceEnds(NOW, DAYS, 1)).toEqual([]);
    // The range starts 2026-06-12T10:17; each end is the whole hour at or before a third of it.
    expect(sliceEnds(NOW, DAYS, 3).map((ms) => new Date(ms).toISOString())).toEqual([
      "2026-06-13T10:00:00.000Z",
      "2026-06-14T10:00:00.000Z",
    ]);
  });

  it("writes the same events as one piece but for each slice's ingest_xid, each session in one slice", () => {
    const whole = rowsOf(generator("100").eventChunks());
    expect(whole).toHaveLength(EVENTS);

    const sliced = generator("0");
    const ends = [...sliceEnds(NOW, DAYS, 4), Number.POSITIVE_INFINITY];
    const slices = ends.map((until, i) => {
      sliced.setIngestXid(String(200 + i));
      return rowsOf(sliced.eventChunks(until));
    });
    expect(sliced.done).toBe(true);
    expect(rowsOf(sliced.eventChunks())).toEqual([]);
    expect(slices.every((rows) => rows.length > 0)).toBe(true);

    expect(slices.flat().map(withoutXid)).toEqual(whole.map(withoutXid));
    slices.forEach((rows, i) => {
      expect(new Set(rows.map((row) => row[XID]))).toEqual(new Set([String(200 + i)]));
    });
    const sliceOfSession = new Map<string, number>();
    slices.forEach((rows, i) => {
      for (const row of rows) {
        const session = row[SESSION] ?? "";
        expect(sliceOfSession.get(session) ?? i).toBe(i);
        sliceOfSession.set(session, i);
      }
    });
    // A slice's sessions start before its end (their later events may run past it).
    slices.forEach((rows, i) => {
      const firstOfSession = new Map<string, number>();
      for (const row of rows) {
        const at = Date.parse(row[CREATED] ?? "");
        const session = row[SESSION] ?? "";
        firstOfSession.set(session, Math.min(firstOfSession.get(session) ?? at, at));
      }
      const until = ends[i] ?? Number.POSITIVE_INFINITY;
      expect(Math.max(...firstOfSession.values())).toBeLessThan(until);
    });
    expect(sliced.events).toBe(EVENTS);
  });
});
