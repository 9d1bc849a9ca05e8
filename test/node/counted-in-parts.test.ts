import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projects } from "../../src/db/schema";
import { sessionBreakdown } from "../../src/queries/insights/breakdowns";
import { dayParts } from "../../src/queries/insights/day-parts";
import type { SessionScope } from "../../src/queries/insights/model";
import { topPages } from "../../src/queries/insights/pages";
import { bitStringsCover } from "../../src/queries/insights/session-masks";
import { is } from "../support/dimension-filter-cases";
import { createOrganization, insertEvents, uniqueId } from "../support/factories";
import { parse } from "../support/filter-input";
import { testDatabase } from "../support/node/database";
import { pageRank, rankedPage, valueRank } from "../support/ranked-page";

/**
 * Under two or three filters, a breakdown and `/pages` over two weeks count their values in two
 * parts of the window's days at once (src/queries/insights/counted-in-parts.ts): the values of the
 * largest bounds first in every part, then, only when another value's bound reaches the count at
 * the page's last place over the whole window, those values in every part again. Each answer is
 * held against the exact path and against counts worked out by hand below.
 */

const database = testDatabase();
afterAll(() => database.close());

const DAY = 86_400_000;
const FROM = Date.UTC(2026, 6, 6);
const projectId = uniqueId("counted-in-parts");

// Twenty large cities of 30 sessions in Norway, half on each of the first two days (one in each
// part: the days are dealt out in turn); "Zed" has 12 sessions, all on a phone, 5 on the third
// day (the first part) and 7 on the tenth (the second); "Yam" 2, on a phone, on the fourth and
// fifth days. On a phone among the large: Atlanta twice on the first day and once on the second,
// Bergen once on the first, Cairo once on the second. Each city's sessions see a page of their
// own, and /zed has another title on the tenth day.
const LARGE = [
  "Atlanta",
  "Bergen",
  "Cairo",
  "Dakar",
  "Essen",
  "Fes",
  "Graz",
  "Hue",
  "Ica",
  "Jena",
  "Kiel",
  "Lima",
  "Metz",
  "Nice",
  "Oslo",
  "Pisa",
  "Quito",
  "Riga",
  "Sana",
  "Tours",
];
const ON_A_PHONE: Record<string, number[]> = { Atlanta: [0, 1, 15], Bergen: [0], Cairo: [15] };
const sessions = [
  ...LARGE.flatMap((city) =>
    Array.from({ length: 30 }, (_, index) => ({
      city,
      day: index < 15 ? 0 : 1,
      matches: ON_A_PHONE[city]?.includes(index) ?? false,
      title: city,
    })),
  ),
  ...Array.from({ length: 12 }, (_, index) => ({
    city: "Zed",
    day: index < 5 ? 2 : 9,
    matches: true,
    title: index < 5 ? "Zed A" : "Zed B",
  })),
  { city: "Yam", day: 3, matches: true, title: "Yam" },
  { city: "Yam", day: 4, matches: true, title: "Yam" },
];

const scope: SessionScope = {
  projectId,
  window: { start: FROM, end: FROM + 14 * DAY },
  filters: parse([is("country", "is", ["NO"]), is("device", "is", ["mobile"])]),
  rollups: true,
  projectTimezone: "UTC",
};
const exactScope: SessionScope = { ...scope, rollups: false };

beforeAll(async () => {
  const organizationId = await createOrganization(database.db);
  await database.db.insert(projects).values({ id: projectId, organizationId, name: projectId });
  await insertEvents(
    database.db,
    sessions.map(({ city, day, matches, title }, index) => ({
      projectId,
      sessionId: `s${index}`,
      profileId: `v${index}`,
      createdAt: new Date(FROM + day * DAY + 3_600_000 + index * 1_000),
      city,
      path: `/${city.toLowerCase()}`,
      title,
      country: "NO",
      device: matches ? "mobile" : "desktop",
    })),
  );
});

describe("counted in two parts of the window's days", () => {
  it("the window is dealt out to two parts, and its strings are built", async () => {
    const days = Array.from({ length: 14 }, (_, index) => FROM + index * DAY);
    expect(dayParts(scope.window, "UTC")).toEqual([
      { ...scope.window, days: days.filter((_, index) => index % 2 === 0) },
      { ...scope.window, days: days.filter((_, index) => index % 2 === 1) },
    ]);
    expect(await bitStringsCover(database.db, scope, [])).toBe(true);
  });

  it("a city of few sessions that all match ranks first, its parts' counts summed", async () => {
    // Two rows and one more: the twelve cities of the largest bounds are counted first in each
    // part; over both, Atlanta (2 + 1) matches 3, Bergen (1 + 0) and Cairo (0 + 1) 1 each, so the
    // third place needs 1. The other cities' bounds reach it and they are counted next: Zed
    // matches 5 + 7 and Yam 1 + 1 (its bound of 2 is below Atlanta's 3, and still counted).
    const first = await sessionBreakdown(database.db, scope, "city", { offset: 0, limit: 2 });
    expect(first.map(({ name, sessions }) => ({ name, sessions }))).toEqual([
      { name: "Zed", sessions: 12 },
      { name: "Atlanta", sessions: 3 },
      { name: "Yam", sessions: 2 },
    ]);
    for (const page of [
      { offset: 0, limit: 1 },
      { offset: 1, limit: 2 },
      { offset: 2, limit: 1 },
      { offset: 0, limit: 30 },
    ]) {
      const answered = await sessionBreakdown(database.db, scope, "city", page);
      const exact = await sessionBreakdown(database.db, exactScope, "city", page);
      expect(rankedPage(answered, page.limit, valueRank)).toEqual(rankedPage(exact, page.limit, valueRank));
    }
  });

  it("a page of few sessions that all match ranks first, with the greatest title of both parts", async () => {
    const first = await topPages(database.db, scope, { offset: 0, limit: 2 });
    expect(first.map(({ path, title, sessions }) => ({ path, title, sessions }))).toEqual([
      { path: "/zed", title: "Zed B", sessions: 12 },
      { path: "/atlanta", title: "Atlanta", sessions: 3 },
      { path: "/yam", title: "Yam", sessions: 2 },
    ]);
    for (const page of [
      { offset: 0, limit: 1 },
      { offset: 1, limit: 2 },
      { offset: 0, limit: 30 },
    ]) {
      const answered = await topPages(database.db, scope, page);
      const exact = await topPages(database.db, exactScope, page);
      expect(rankedPage(answered, page.limit, pageRank)).toEqual(rankedPage(exact, page.limit, pageRank));
    }
  });
});
