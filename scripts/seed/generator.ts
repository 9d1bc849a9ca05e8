import { EVENT_NAMES, PAGES, SCREEN_VIEW } from "./catalogue-site";
import { ByteSink, CHUNK_BYTES, copyText, DAY, HOUR, type Scratch } from "./copy-text";
import { hash32, Rng, type WeightTable, weightTable } from "./random";
import { HourBuffer, NULL_REFERRER_BLOCK, planSession } from "./session-plans";
import { VisitorPool } from "./visitor-pool";

/**
 * Deterministic demo traffic (CONTRACT section 11), streamed into Postgres with COPY.
 *
 * Rows are generated straight into COPY text (no per-event objects), hour by hour: each hour gets
 * its share of the events (daily rhythm, weekly pattern, a mild upward trend), its sessions get
 * sorted start times, and each session goes to a visitor of the project's pool that has been idle
 * for more than 30 minutes, so the 30-minute session rule holds for every visitor. Memory is
 * bounded by one hour of sessions plus a few numbers per visitor.
 *
 * Determinism: the traffic depends on `seed` only; ids (events, sessions) on `seed` and `now`, so
 * the same seed and `now` give identical rows and a rerun at another moment never collides.
 *
 * What the rows are made of is the catalogue (catalogue-*.ts); session-plans.ts decides what each
 * session does, visitor-pool.ts who it belongs to, copy-text.ts writes the bytes, and loader.ts
 * streams them into the tables.
 */

export const EVENT_COLUMNS = [
  "id",
  "created_at",
  "name",
  "path",
  "origin",
  "title",
  "duration",
  "revenue",
  "properties",
  "project_id",
  "device_id",
  "profile_id",
  "session_id",
  "country",
  "region",
  "city",
  "latitude",
  "longitude",
  "device",
  "brand",
  "model",
  "browser",
  "browser_version",
  "os",
  "os_version",
  "referrer",
  "referrer_name",
  "referrer_type",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "utm_term",
  "utm_content",
  "ingest_xid",
] as const;

export const PROFILE_COLUMNS = [
  "project_id",
  "id",
  "first_name",
  "last_name",
  "email",
  "avatar",
  "is_external",
  "properties",
  "created_at",
  "last_seen_at",
] as const;

const TAB = 9;
const utf8 = (text: string): Buffer => Buffer.from(text, "utf8");
/** name\t, escaped and encoded once. */
const EVENT_NAME_BYTES = EVENT_NAMES.map((name) => utf8(`${copyText(name)}\t`));
/** path\torigin\ttitle\t, escaped and encoded once. */
const PAGE_BYTES = PAGES.map((p) => utf8(`${p.block}\t`));
const EMPTY_PROPS = "{}";
const EMPTY_PROPS_BYTES = utf8(EMPTY_PROPS);

export interface GeneratorOptions {
  events: number;
  days: number;
  seed: number;
  now: Date;
  projects: ReadonlyArray<readonly [string, number]>;
  /** Value written to events.ingest_xid (the loading transaction's id). */
  ingestXid: string;
}

/**
 * Generates the demo events, then their profiles, as COPY text in ~1 MB Buffers. Single use:
 * iterate `eventChunks()` to the end (once, or once per slice of hours), then `profileChunks()`
 * (profiles come from the visitors seen).
 */
export class DemoDataGenerator {
  events = 0;
  sessions = 0;
  profiles = 0;
  readonly pools: VisitorPool[];
  private readonly rng: Rng;
  private readonly ids: Rng;
  private readonly attrs = new Rng();
  private readonly projectTable: WeightTable<number>;
  private readonly nowMs: number;
  private readonly startMs: number;
  private xidTail: string;
  /** The hours and their traffic weights, computed once. */
  private readonly buckets: { ends: Float64Array; weights: Float64Array; totalWeight: number };
  /** Where event generation stands: the next hour, its start, the events planned, the weight passed. */
  private readonly cursor = { bucket: 0, bucketStart: 0, planned: 0, cumulative: 0 };
  private readonly sink = new ByteSink();
  private readonly firstTail: Scratch = { buf: Buffer.alloc(4096), length: 0 };
  private readonly restTail: Scratch = { buf: Buffer.alloc(4096), length: 0 };

  constructor(private readonly options: GeneratorOptions) {
    const { events, days, seed, now, projects } = options;
    if (!Number.isSafeInteger(events) || events < 0) throw new Error("events must be a non-negative integer");
    if (!(days > 0)) throw new Error("days must be positive");
    if (Number.isNaN(now.getTime())) throw new Error("now must be a valid date");
    if (projects.length === 0) throw new Error("at least one project is needed");
    this.rng = new Rng(seed >>> 0);
    this.ids = new Rng(hash32(seed >>> 0, Math.floor(now.getTime() / 4294967296), now.getTime() >>> 0));
    this.nowMs = now.getTime();
    this.startMs = this.nowMs - Math.round(days * DAY);
    this.xidTail = `\t${copyText(options.ingestXid)}\n`;
    const { ends, weights } = this.hourBuckets();
    this.buckets = { ends, weights, totalWeight: weights.reduce((sum, w) => sum + w, 0) };
    this.cursor.bucketStart = this.startMs;
    this.projectTable = weightTable(projects.map(([, share], i) => [i, share] as const));
    const totalShare = projects.reduce((sum, [, share]) => sum + share, 0);
    this.pools = projects.map(
      ([project, share], i) =>
        new VisitorPool(project, i, Math.ceil((events * share) / totalShare / 4) + 30, seed),
    );
  }

  /**
   * Event rows (COPY text, columns EVENT_COLUMNS) of the hours that start before `untilMs`, from
   * where the previous call stopped: a load in slices calls it once per slice (each slice's
   * transaction writing its own `ingestXid` first), a load in one piece once. The rows are the same
   * either way but for their `ingest_xid`, since a session's events are written with its hour.
   */
  *eventChunks(untilMs = Number.POSITIVE_INFINITY): Generator<Buffer> {
    const { rng, sink } = this;
    const { ends, weights, totalWeight } = this.buckets;
    const at = this.cursor;
    const hour = new HourBuffer();
    while (at.bucket < ends.length && at.bucketStart < untilMs) {
      const bucketEnd = ends[at.bucket] ?? this.nowMs;
      at.cumulative += weights[at.bucket] ?? 0;
      const last = at.bucket === ends.length - 1;
      const target = last
        ? this.options.events
        : Math.round((this.options.events * at.cumulative) / totalWeight);
      // Sessions are planned whole; one that overshoots the hour's share takes it from the next
      // hour. Only the total is a hard limit (the last session may be cut short to meet it).
      hour.reset();
      while (at.planned < target) {
        hour.room = this.options.events - at.planned;
        planSession(rng, this.projectTable, hour);
        this.sessions++;
        at.planned = this.options.events - hour.room;
      }
      if (hour.sessionCount > 0) {
        const starts = new Float64Array(hour.sessionCount);
        for (let i = 0; i < starts.length; i++)
          starts[i] = at.bucketStart + rng.float() * (bucketEnd - at.bucketStart);
        starts.sort();
        for (let s = 0; s < hour.sessionCount; s++) {
          this.emitSession(hour, s, Math.floor(starts[s] ?? at.bucketStart));
          if (sink.size >= CHUNK_BYTES) sink.flush();
          yield* sink.takeReady();
        }
      }
      at.bucketStart = bucketEnd;
      at.bucket++;
    }
    sink.flush();
    yield* sink.takeReady();
  }

  /** Whether every event has been generated. */
  get done(): boolean {
    return this.cursor.bucket >= this.buckets.ends.length;
  }

  /** The value the events generated from now on write to `ingest_xid` (the loading transaction's). */
  setIngestXid(xid: string): void {
    this.xidTail = `\t${copyText(xid)}\n`;
  }

  /** Profile rows (COPY text, columns PROFILE_COLUMNS) of the identified visitors that were seen. */
  *profileChunks(): Generator<Buffer> {
    let chunk = "";
    for (const pool of this.pools) {
      for (let v = 0; v < pool.size; v++) {
        const firstSeen = pool.firstSeen[v] ?? 0;
        if (firstSeen === 0) continue;
        const visitor = pool.visitor(v, this.attrs);
        if (!visitor.identified) continue;
        chunk += pool.profileRow(visitor, firstSeen, pool.lastSeen[v] ?? firstSeen, this.attrs);
        this.profiles++;
        if (chunk.length >= CHUNK_BYTES / 2) {
          yield utf8(chunk);
          chunk = "";
        }
      }
    }
    if (chunk.length > 0) yield utf8(chunk);
  }

  /** Hour-aligned time buckets from `now - days` to `now` with their traffic weights. */
  private hourBuckets(): { ends: Float64Array; weights: Float64Array } {
    const { startMs, nowMs } = this;
    const boundaries: number[] = [];
    for (let t = Math.floor(startMs / HOUR) * HOUR + HOUR; t < nowMs; t += HOUR) boundaries.push(t);
    boundaries.push(nowMs);
    const ends = Float64Array.from(boundaries);
    const weights = new Float64Array(ends.length);
    const noise = new Rng();
    const dayNoise = new Map<number, number>();
    let from = startMs;
    for (let i = 0; i < ends.length; i++) {
      const to = ends[i] ?? nowMs;
      const mid = (from + to) / 2;
      const day = Math.floor(mid / DAY);
      let factor = dayNoise.get(day);
      if (factor === undefined) {
        factor = 0.88 + 0.24 * noise.reseed(hash32(this.options.seed >>> 0, day)).float();
        dayNoise.set(day, factor);
      }
      const progress = nowMs > startMs ? (mid - startMs) / (nowMs - startMs) : 1;
      weights[i] = Math.max(0, to - from) * trafficShape(mid) * factor * (0.85 + 0.3 * progress);
      from = to;
    }
    return { ends, weights };
  }

  /** Gives session `s` of the hour a visitor and a start time, and writes its rows. */
  private emitSession(hour: HourBuffer, s: number, plannedStart: number): void {
    const { sink, ids } = this;
    const first = hour.sessionFirst[s] ?? 0;
    const length = hour.sessionLength[s] ?? 0;
    const span = hour.eventOffset[first + length - 1] ?? 0;
    // Events never lie in the future: a session that would run past `now` starts earlier.
    const start = plannedStart + span > this.nowMs ? this.nowMs - span : plannedStart;
    const pool = this.pools[hour.sessionProject[s] ?? 0];
    if (pool === undefined) throw new Error("unknown project index");
    const visitor = pool.visitor(pool.acquire(this.rng, start, start + span), this.attrs);
    const head = `\t${visitor.head}${ids.uuid()}${visitor.rest}\t`;
    const { firstTail, restTail } = this;
    ByteSink.encode(head + (hour.sessionReferrer[s] ?? NULL_REFERRER_BLOCK) + this.xidTail, firstTail);
    if (length > 1) ByteSink.encode(head + NULL_REFERRER_BLOCK + this.xidTail, restTail);
    for (let i = 0; i < length; i++) {
      const e = first + i;
      const offset = hour.eventOffset[e] ?? 0;
      const type = hour.eventType[e] ?? SCREEN_VIEW;
      const props = hour.eventProps[e] ?? EMPTY_PROPS;
      sink.reserve(512 + firstTail.length + restTail.length + props.length * 3);
      sink.uuid(ids);
      sink.byte(TAB);
      sink.timestamp(start + offset);
      sink.byte(TAB);
      sink.bytes(EVENT_NAME_BYTES[type] ?? EVENT_NAME_BYTES[SCREEN_VIEW] ?? Buffer.alloc(0));
      sink.bytes(PAGE_BYTES[hour.eventPage[e] ?? 0] ?? Buffer.alloc(0));
      sink.int(type === SCREEN_VIEW && i < length - 1 ? (hour.eventOffset[e + 1] ?? offset) - offset : 0);
      sink.byte(TAB);
      sink.int(hour.eventRevenue[e] ?? 0);
      sink.byte(TAB);
      if (props === EMPTY_PROPS) sink.bytes(EMPTY_PROPS_BYTES);
      else sink.text(props);
      sink.scratch(i === 0 ? firstTail : restTail);
    }
    this.events += length;
  }
}

/** Relative traffic at an instant: a daily rhythm peaking mid-afternoon UTC, quieter weekends. */
function trafficShape(ms: number): number {
  const date = new Date(ms);
  const hour = date.getUTCHours() + date.getUTCMinutes() / 60;
  const distance = Math.min(Math.abs(hour - 14.5), 24 - Math.abs(hour - 14.5));
  const daily = 0.22 + Math.exp(-(distance * distance) / (2 * 4.2 * 4.2));
  const weekly = WEEKDAY_FACTORS[date.getUTCDay()] ?? 1;
  return daily * weekly;
}

const WEEKDAY_FACTORS = [0.74, 1.04, 1.08, 1.08, 1.06, 0.95, 0.7] as const;
