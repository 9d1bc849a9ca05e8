import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClient,
  createOrganization,
  createProject,
  credentialHeaders,
  type EventInput,
  insertEvents,
  type TestClient,
} from "../support/factories";
import { type RawEvent, referenceBreakdown, referenceMetrics, referencePages } from "../support/reference";
import { generateTraffic } from "../support/traffic";
import { call, testDatabase } from "../support/worker/http";

/**
 * Days without a local midnight: America/Santiago, Asia/Beirut and America/Havana move their clocks
 * from 00:00 to 01:00 on their spring days, so that day starts at 01:00 and the next one at 00:00
 * again. A project in each zone reports in its own days (its day rollups are built in them), and
 * windows that start mid-day on such a day, or take it whole, must count every session once, by
 * hour and by day, on the rollup path and on the exact path alike.
 *
 * Every instant below was worked out by hand from the 2026 tz rules; the numbers come from the
 * reference over the raw events.
 */

const database = testDatabase();
afterAll(() => database.close());

const utc = (text: string) => Date.parse(text);
const HOUR = 3_600_000;

interface Zone {
  timezone: string;
  /** The local day without a midnight, the day after it, and two days after it. */
  days: [string, string, string];
  /** The first instant of each of those days (the gap day's is 01:00 local). */
  dayStarts: [number, number, number];
  /** Noon of the gap day, local, and the end of the third day (the next local midnight). */
  noon: number;
  end: number;
}

const ZONES: Zone[] = [
  {
    // 2026-09-06 00:00 -04:00 becomes 01:00 -03:00.
    timezone: "America/Santiago",
    days: ["2026-09-06", "2026-09-07", "2026-09-08"],
    dayStarts: [utc("2026-09-06T04:00:00Z"), utc("2026-09-07T03:00:00Z"), utc("2026-09-08T03:00:00Z")],
    noon: utc("2026-09-06T15:00:00Z"),
    end: utc("2026-09-09T03:00:00Z"),
  },
  {
    // 2026-03-29 00:00 +02:00 becomes 01:00 +03:00.
    timezone: "Asia/Beirut",
    days: ["2026-03-29", "2026-03-30", "2026-03-31"],
    dayStarts: [utc("2026-03-28T22:00:00Z"), utc("2026-03-29T21:00:00Z"), utc("2026-03-30T21:00:00Z")],
    noon: utc("2026-03-29T09:00:00Z"),
    end: utc("2026-03-31T21:00:00Z"),
  },
  {
    // 2026-03-08 00:00 -05:00 becomes 01:00 -04:00.
    timezone: "America/Havana",
    days: ["2026-03-08", "2026-03-09", "2026-03-10"],
    dayStarts: [utc("2026-03-08T05:00:00Z"), utc("2026-03-09T04:00:00Z"), utc("2026-03-10T04:00:00Z")],
    noon: utc("2026-03-08T16:00:00Z"),
    end: utc("2026-03-11T04:00:00Z"),
  },
];

interface ZoneProject {
  zone: Zone;
  projectId: string;
  client: TestClient;
  traffic: RawEvent[];
}

const projects: ZoneProject[] = [];

beforeAll(async () => {
  const organizationId = await createOrganization(database.db);
  for (const [index, zone] of ZONES.entries()) {
    const projectId = await createProject(database.db, organizationId, { timezone: zone.timezone });
    const client = await createClient(database.db, { type: "read", organizationId, projectId });
    const [gapDay, nextDay] = zone.dayStarts;
    const traffic = [
      // A day before the gap day to two days after the window.
      ...generateTraffic({
        projectId,
        seed: 31 + index,
        sessions: 240,
        from: gapDay - 24 * HOUR,
        to: zone.end + 48 * HOUR,
      }),
      // The first hour of the day after the gap day: the hour that a day stepped from 01:00 to
      // 01:00 drops from one day and counts in two.
      ...generateTraffic({ projectId, seed: 41 + index, sessions: 12, from: nextDay, to: nextDay + HOUR }),
    ];
    await insertEvents(database.db, traffic as EventInput[]);
    projects.push({ zone, projectId, client, traffic });
  }
});

interface MetricsBody {
  metrics: Record<string, number>;
  series: Array<Record<string, number | string> & { date: string }>;
  meta: { startDate: string; endDate: string; timezone: string; interval: string };
}

function get<T>(project: ZoneProject, path: string, params: Record<string, string>) {
  const search = new URLSearchParams({ timezone: project.zone.timezone, ...params });
  return call<T>(`/insights/${project.projectId}/${path}?${search}`, {
    headers: { ...credentialHeaders(project.client), "Cache-Control": "no-cache" },
  });
}

const hoursFrom = (start: number, end: number) =>
  Array.from({ length: (end - start) / HOUR }, (_, index) => start + index * HOUR);

describe.each(ZONES.map((zone) => [zone.timezone, zone] as const))(
  "%s: a day without a midnight",
  (timezone) => {
    const project = () => {
      const found = projects.find((candidate) => candidate.zone.timezone === timezone);
      if (!found) throw new Error(`no project in ${timezone}`);
      return found;
    };

    async function expectMetrics(
      params: Record<string, string>,
      window: { start: number; end: number },
      buckets: number[],
    ) {
      const { projectId, traffic } = project();
      const response = await get<MetricsBody>(project(), "metrics", params);
      expect(response.status).toBe(200);
      expect(response.body.series.map((point) => Date.parse(point.date))).toEqual(buckets);
      const expected = referenceMetrics(traffic, { projectId, ...window }, buckets);
      expect(response.body.metrics).toEqual(expected.metrics);
      expect(response.body.series.map(({ date: _date, ...rest }) => rest)).toEqual(expected.series);
      expect(expected.metrics.total_sessions).toBeGreaterThan(20);
    }

    it("a window from noon of that day, by day", async () => {
      const { zone } = project();
      await expectMetrics(
        { startDate: `${zone.days[0]} 12:00:00`, endDate: zone.days[2], interval: "day" },
        { start: zone.noon, end: zone.end },
        zone.dayStarts,
      );
    });

    it("a window from noon of that day, by hour", async () => {
      const { zone } = project();
      await expectMetrics(
        { startDate: `${zone.days[0]} 12:00:00`, endDate: zone.days[2], interval: "hour" },
        { start: zone.noon, end: zone.end },
        hoursFrom(zone.noon, zone.end),
      );
    });

    it("the whole day and the two after it, by day", async () => {
      const { zone } = project();
      await expectMetrics(
        { startDate: zone.days[0], endDate: zone.days[2], interval: "day" },
        { start: zone.dayStarts[0], end: zone.end },
        zone.dayStarts,
      );
    });

    it("pages and a breakdown of those windows", async () => {
      const { zone, projectId, traffic } = project();
      for (const [startDate, start] of [
        [`${zone.days[0]} 12:00:00`, zone.noon],
        [zone.days[0], zone.dayStarts[0]],
      ] as const) {
        const params = { startDate, endDate: zone.days[2], limit: "1000" };
        const scope = { projectId, start, end: zone.end };
        const pages = await get(project(), "pages", params);
        expect(pages.status).toBe(200);
        expect(pages.body).toEqual(referencePages(traffic, scope));
        const countries = await get(project(), "country", params);
        expect(countries.status).toBe(200);
        expect(countries.body).toEqual(referenceBreakdown(traffic, scope, "country"));
      }
    });
  },
);
