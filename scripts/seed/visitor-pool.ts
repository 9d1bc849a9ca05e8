import {
  COMPANIES,
  DEVICE_PROFILES,
  EMAIL_DOMAINS,
  FIRST_NAMES,
  LAST_NAMES,
  PLACE_BLOCKS,
  PLACES,
  type Place,
  PROFILE_PLANS,
  ROLES,
} from "./catalogue-visitors";
import { copyText, MINUTE, NULL } from "./copy-text";
import { hash32, hashString, pickWeighted, type Rng } from "./random";

/**
 * The visitors of each demo project: which one takes a session (none has two at once), and who
 * each one is (place, device, browser and, for those who sign in, a profile), derived from the
 * seed, the project and the visitor's index alone (only a few numbers per visitor are kept).
 */

/** A visitor starts a new session only after more than this much idle time (with a margin). */
const SESSION_IDLE_MS = 30 * MINUTE + 5_000;
/** Share of visitors who sign in (their events carry a profile id; they get a profile row). */
const IDENTIFIED_SHARE = 0.3;

/** The visitors of one project: who is idle since when, and when each was first and last seen. */
export class VisitorPool {
  lastEnd: Float64Array;
  firstSeen: Float64Array;
  lastSeen: Float64Array;
  size: number;
  readonly escapedProject: string;

  constructor(
    readonly project: string,
    readonly projectIndex: number,
    readonly nominal: number,
    private readonly seed: number,
  ) {
    this.size = nominal;
    this.lastEnd = new Float64Array(nominal).fill(Number.NEGATIVE_INFINITY);
    this.firstSeen = new Float64Array(nominal);
    this.lastSeen = new Float64Array(nominal);
    this.escapedProject = copyText(project);
  }

  /**
   * A visitor idle for more than 30 minutes at `start`: returning visitors are favoured (a skewed
   * draw), and when every drawn one is busy a new visitor joins the pool.
   */
  acquire(rng: Rng, start: number, end: number): number {
    let visitor = -1;
    for (let attempt = 0; attempt < 6 && visitor < 0; attempt++) {
      const u = rng.float();
      const candidate = Math.floor(this.nominal * u * u);
      if (start - (this.lastEnd[candidate] ?? 0) > SESSION_IDLE_MS) visitor = candidate;
    }
    if (visitor < 0) {
      const from = rng.int(this.size);
      for (let i = 0; i < this.size && visitor < 0; i++) {
        const candidate = (from + i) % this.size;
        if (start - (this.lastEnd[candidate] ?? 0) > SESSION_IDLE_MS) visitor = candidate;
      }
    }
    if (visitor < 0) visitor = this.grow();
    this.lastEnd[visitor] = Math.max(this.lastEnd[visitor] ?? end, end);
    const first = this.firstSeen[visitor] ?? 0;
    if (first === 0 || start < first) this.firstSeen[visitor] = start;
    if (end > (this.lastSeen[visitor] ?? 0)) this.lastSeen[visitor] = end;
    return visitor;
  }

  /**
   * A visitor's fixed attributes, derived from (seed, project, visitor index) alone. `attrs` is a
   * scratch generator, reseeded here (the traffic's own stream is left alone).
   */
  visitor(index: number, attrs: Rng): Visitor {
    const rng = attrs.reseed(hash32(this.seed >>> 0, this.projectIndex, index), 0x0b5e55ed);
    const identified = rng.chance(IDENTIFIED_SHARE);
    const deviceId = rng.hex(16);
    const profileId = identified ? `user_${index + 1}` : deviceId;
    const where = pickWeighted(rng, PLACES);
    const kind = pickWeighted(rng, DEVICE_PROFILES);
    const browser = pickWeighted(rng, kind.browsers);
    return {
      identified,
      profileId,
      place: where,
      head: `${this.escapedProject}\t${deviceId}\t${profileId}\t`,
      // Catalog strings need no escaping (checked when the module loads).
      rest:
        `\t${PLACE_BLOCKS.get(where) ?? ""}\t${kind.device}\t${kind.brand ?? NULL}\t${rng.pick(kind.models) ?? NULL}` +
        `\t${browser.name}\t${rng.pick(browser.versions)}\t${kind.os}\t${rng.pick(kind.osVersions) ?? NULL}`,
    };
  }

  /** The profile row of an identified visitor (COPY text, columns PROFILE_COLUMNS); `attrs` as above. */
  profileRow(visitor: Visitor, firstSeen: number, lastSeen: number, attrs: Rng): string {
    const rng = attrs.reseed(hashString(`${this.seed}:${this.project}:${visitor.profileId}`));
    const firstName = rng.pick(FIRST_NAMES);
    const lastName = rng.pick(LAST_NAMES);
    const local = `${firstName}.${lastName}`
      .normalize("NFKD")
      .replace(/[^A-Za-z.]/g, "")
      .toLowerCase();
    const email = `${local}${rng.chance(0.4) ? rng.range(1, 99) : ""}@${rng.pick(EMAIL_DOMAINS)}`;
    const avatar = rng.chance(0.8) ? `https://avatars.example.com/${visitor.profileId}.png` : null;
    const company = rng.pick(COMPANIES);
    const properties = JSON.stringify({
      plan: rng.pick(PROFILE_PLANS),
      role: rng.pick(ROLES),
      ...(company === null ? {} : { company }),
      country: visitor.place.country,
      newsletter: rng.chance(0.4),
    });
    return `${[
      this.project,
      visitor.profileId,
      firstName,
      lastName,
      email,
      avatar,
      "t",
      properties,
      new Date(firstSeen).toISOString(),
      new Date(lastSeen).toISOString(),
    ]
      .map((v) => copyText(v))
      .join("\t")}\n`;
  }

  private grow(): number {
    const index = this.size;
    if (index >= this.lastEnd.length) {
      const capacity = Math.max(16, this.lastEnd.length * 2);
      const lastEnd = new Float64Array(capacity).fill(Number.NEGATIVE_INFINITY);
      lastEnd.set(this.lastEnd);
      const firstSeen = new Float64Array(capacity);
      firstSeen.set(this.firstSeen);
      const lastSeen = new Float64Array(capacity);
      lastSeen.set(this.lastSeen);
      this.lastEnd = lastEnd;
      this.firstSeen = firstSeen;
      this.lastSeen = lastSeen;
    }
    this.size++;
    return index;
  }
}

export interface Visitor {
  identified: boolean;
  profileId: string;
  place: Place;
  /** project\tdevice_id\tprofile_id\t (escaped; the session id follows). */
  head: string;
  /** \tcountry…os_version (escaped). */
  rest: string;
}
