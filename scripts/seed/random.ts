/**
 * Deterministic pseudo-random numbers for the demo data generator. Never use Math.random in the
 * seed: the same seed (and the same `now`) must give byte-identical rows.
 */

/** Mixes a 32-bit value (MurmurHash3's finalizer); a good, cheap integer hash. */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hashes a few 32-bit integers into one (order-sensitive). */
export function hash32(...values: number[]): number {
  let h = 0x9e3779b9;
  for (const value of values) h = mix32(h ^ mix32(value + 0x7f4a7c15));
  return h >>> 0;
}

/** Hashes a string into 32 bits (FNV-1a, then mixed). */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return mix32(h);
}

/** sfc32: small, fast, passes PractRand; 128 bits of state. */
export class Rng {
  private a = 0;
  private b = 0;
  private c = 0;
  private d = 0;

  constructor(seed = 0) {
    this.reseed(seed);
  }

  /** Restarts the sequence from a 32-bit seed (cheap, so one instance can serve many hashes). */
  reseed(seed: number, salt = 0): this {
    this.a = mix32(seed ^ 0x243f6a88);
    this.b = mix32(seed + 0x85a308d3 + salt);
    this.c = mix32(salt ^ 0x13198a2e);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.u32();
    return this;
  }

  /** Uniform unsigned 32-bit integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [min, max]. */
  range(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }

  /** Standard normal (Box–Muller; one of the pair is discarded to keep the stream simple). */
  normal(): number {
    const u = 1 - this.float();
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal with the given median and shape. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** Number of failures before the first success, success probability p (mean (1-p)/p). */
  geometric(p: number): number {
    return Math.floor(Math.log(1 - this.float()) / Math.log(1 - p));
  }

  /** A version 4 UUID built from four draws. */
  uuid(): string {
    const a = this.u32();
    const b = this.u32();
    const c = this.u32();
    const d = this.u32();
    return (
      hex8(a) +
      "-" +
      hex4(b >>> 16) +
      "-4" +
      hex4(b & 0xfff).slice(1) +
      "-" +
      hex4(((c >>> 16) & 0x3fff) | 0x8000) +
      "-" +
      hex4(c & 0xffff) +
      hex8(d)
    );
  }

  /** `bytes` random bytes as lower-case hex. */
  hex(bytes: number): string {
    let out = "";
    for (let i = 0; i < bytes; i += 4) out += hex8(this.u32());
    return out.slice(0, bytes * 2);
  }
}

const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function byteHex(value: number): string {
  return HEX_BYTE[value & 0xff] ?? "00";
}

function hex4(value: number): string {
  return byteHex(value >>> 8) + byteHex(value);
}

function hex8(value: number): string {
  return byteHex(value >>> 24) + byteHex(value >>> 16) + byteHex(value >>> 8) + byteHex(value);
}

/** Cumulative weights for `pickWeighted`. */
export interface WeightTable<T> {
  readonly items: readonly T[];
  readonly cumulative: Float64Array;
  readonly total: number;
}

export function weightTable<T>(entries: ReadonlyArray<readonly [T, number]>): WeightTable<T> {
  const cumulative = new Float64Array(entries.length);
  let total = 0;
  entries.forEach(([, weight], i) => {
    total += weight;
    cumulative[i] = total;
  });
  return { items: entries.map(([item]) => item), cumulative, total };
}

/** Picks an item with probability proportional to its weight. */
export function pickWeighted<T>(rng: Rng, table: WeightTable<T>): T {
  const target = rng.float() * table.total;
  const { cumulative, items } = table;
  let i = 0;
  const last = items.length - 1;
  while (i < last && (cumulative[i] ?? 0) <= target) i++;
  const item = items[i];
  if (item === undefined) throw new Error("pick from an empty weight table");
  return item;
}
