import type { Rng } from "./random";

/**
 * PostgreSQL's COPY text format: one value at a time (`copyText`), or whole rows written byte by
 * byte into ~1 MB Buffers (`ByteSink`, what the generator fills).
 */

/** Milliseconds: the timestamps written here, and the generator's clock. */
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

const COPY_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "\t": "\\t",
  "\n": "\\n",
  "\r": "\\r",
};
export const NEEDS_ESCAPE = /[\\\t\n\r]/;
export const NULL = "\\N";

/** One value in PostgreSQL's COPY text format (`\N` for null; backslash, tab, CR and LF escaped). */
export function copyText(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return NULL;
  const text = String(value);
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] ?? c) : text;
}

export const CHUNK_BYTES = 1 << 20;
const HEX_CODES = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/**
 * Fills ~1 MB Buffers with COPY text. Rows are written byte by byte from pre-encoded pieces, so a
 * million rows cost no per-row strings; full Buffers queue up until the generator hands them out.
 */
export class ByteSink {
  private buf = Buffer.allocUnsafe(CHUNK_BYTES + 65_536);
  private pos = 0;
  private readonly ready: Buffer[] = [];
  private day = Number.NaN;
  private readonly dayPrefix = Buffer.alloc(11);

  /** Makes room for `bytes` more; queues the current Buffer when it is full enough. */
  reserve(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    this.flush();
    if (bytes > this.buf.length) this.buf = Buffer.allocUnsafe(bytes + CHUNK_BYTES);
  }

  flush(): void {
    if (this.pos === 0) return;
    this.ready.push(this.buf.subarray(0, this.pos));
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.pos = 0;
  }

  get size(): number {
    return this.pos;
  }

  takeReady(): Buffer[] {
    return this.ready.splice(0, this.ready.length);
  }

  bytes(piece: Uint8Array): void {
    this.buf.set(piece, this.pos);
    this.pos += piece.length;
  }

  /** Writes a string that is already in COPY text form (escaped). */
  text(piece: string): void {
    this.pos += this.buf.write(piece, this.pos, "utf8");
  }

  byte(code: number): void {
    this.buf[this.pos++] = code;
  }

  /** A non-negative integer in decimal. */
  int(value: number): void {
    if (value < 10) {
      this.buf[this.pos++] = 48 + value;
      return;
    }
    let digits = 1;
    for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
    let v = value;
    for (let i = this.pos + digits - 1; i >= this.pos; i--) {
      this.buf[i] = 48 + (v % 10);
      v = Math.floor(v / 10);
    }
    this.pos += digits;
  }

  private two(value: number): void {
    this.buf[this.pos++] = 48 + Math.floor(value / 10);
    this.buf[this.pos++] = 48 + (value % 10);
  }

  /** An instant as `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  timestamp(ms: number): void {
    const day = Math.floor(ms / DAY);
    if (day !== this.day) {
      this.day = day;
      this.dayPrefix.write(new Date(day * DAY).toISOString().slice(0, 11), 0, "latin1");
    }
    this.bytes(this.dayPrefix);
    let rest = ms - day * DAY;
    const hours = Math.floor(rest / HOUR);
    rest -= hours * HOUR;
    const minutes = Math.floor(rest / MINUTE);
    rest -= minutes * MINUTE;
    const seconds = Math.floor(rest / 1000);
    const millis = rest - seconds * 1000;
    this.two(hours);
    this.byte(58);
    this.two(minutes);
    this.byte(58);
    this.two(seconds);
    this.byte(46);
    this.buf[this.pos++] = 48 + Math.floor(millis / 100);
    this.two(millis % 100);
    this.byte(90);
  }

  /** A version 4 UUID from four 32-bit draws. */
  uuid(rng: Rng): void {
    const a = rng.u32();
    const b = rng.u32();
    const c = (rng.u32() & 0x3fffffff) | 0x80000000;
    const d = rng.u32();
    this.hex(a, 8);
    this.byte(45);
    this.hex(b >>> 16, 4);
    this.byte(45);
    this.byte(52);
    this.hex(b & 0xfff, 3);
    this.byte(45);
    this.hex(c >>> 16, 4);
    this.byte(45);
    this.hex(c & 0xffff, 4);
    this.hex(d, 8);
  }

  private hex(value: number, digits: number): void {
    for (let i = digits - 1; i >= 0; i--) this.buf[this.pos++] = HEX_CODES[(value >>> (i * 4)) & 15] ?? 48;
  }

  /** Encodes `text` into a reusable scratch Buffer (for a piece repeated on many rows). */
  static encode(text: string, scratch: Scratch): void {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > scratch.buf.length) scratch.buf = Buffer.allocUnsafe(bytes * 2);
    scratch.length = scratch.buf.write(text, 0, "utf8");
  }

  scratch(piece: Scratch): void {
    piece.buf.copy(this.buf, this.pos, 0, piece.length);
    this.pos += piece.length;
  }
}

export interface Scratch {
  buf: Buffer;
  length: number;
}
