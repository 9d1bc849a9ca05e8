import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Where `npm run dev`, `db:migrate`, `seed` and `client:create` keep the embedded database. */
export const DEFAULT_DATA_DIR = path.join(REPO_ROOT, ".data", "pglite");

/** Pass as `dataDir` for a throwaway database that lives only in memory. */
export const IN_MEMORY = "memory://";

/** Connections served at once (the Worker's per-request pools and the scripts all connect). */
const DEFAULT_MAX_CONNECTIONS = 100;

export interface EmbeddedDatabaseOptions {
  /** A directory (created if missing; default `.data/pglite` at the repo root) or `memory://`. */
  dataDir?: string;
  /** TCP port on 127.0.0.1; 0 (the default) picks any free port. */
  port?: number;
  maxConnections?: number;
}

export interface EmbeddedDatabase {
  /** `postgres://postgres:postgres@127.0.0.1:<port>/postgres` (PGlite accepts any password). */
  url: string;
  port: number;
  /** Stops serving, rolls back an open transaction, then closes PGlite (data on disk). Idempotent. */
  close(): Promise<void>;
}

/** What a running embedded database writes next to its data directory, so other scripts can share it. */
export interface EmbeddedLock {
  pid: number;
  url: string;
  dataDir: string;
}

// ---------------------------------------------------------------------------------------------
// Postgres wire protocol in front of PGlite
// ---------------------------------------------------------------------------------------------

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/** A frontend message; `type` is 0 for the untyped startup packet. */
interface Message {
  type: number;
  bytes: Buffer;
  /** A simple-protocol `COPY … FROM STDIN`. */
  copy?: boolean;
}

const code = (letter: string) => letter.charCodeAt(0);
const QUERY = code("Q");
const SYNC = code("S");
const TERMINATE = code("X");
const COPY_DONE = code("c");
const COPY_FAIL = code("f");
const COPY_IN_RESPONSE = code("G");
const COPY_FROM_STDIN = /^\s*copy\b[\s\S]*\bfrom\s+stdin\b/i;
const COPY_BINARY = /\bbinary\b/i;

/** `output` (whole backend messages) without its first `count` messages of type `type`. */
function dropMessages(output: Buffer, type: number, count: number): Buffer {
  const kept: Buffer[] = [];
  let left = count;
  let offset = 0;
  while (offset + 5 <= output.length) {
    const end = offset + 1 + output.readInt32BE(offset + 1);
    if (left > 0 && output[offset] === type) left--;
    else kept.push(output.subarray(offset, end));
    offset = end;
  }
  if (offset < output.length) kept.push(output.subarray(offset));
  return Buffer.concat(kept);
}

/** Accumulates socket chunks and cuts them into whole messages without quadratic copying. */
class MessageReader {
  private chunks: Buffer[] = [];
  private length = 0;
  private started = false;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The next whole message, or null when more bytes are needed. */
  next(): Message | null {
    const headerLength = this.started ? 5 : 4;
    if (this.length < headerLength) return null;
    const header = this.peek(headerLength);
    const total = this.started ? 1 + header.readInt32BE(1) : header.readInt32BE(0);
    if (total < (this.started ? 5 : 8) || total > 0x40000000) throw new Error("malformed frontend message");
    if (this.length < total) return null;
    const bytes = this.take(total);
    if (!this.started) {
      const request = bytes.length >= 8 ? bytes.readInt32BE(4) : 0;
      // SSL and GSSAPI requests are answered "no" and followed by the real startup packet.
      if (request === PROTOCOL_3) this.started = true;
      return { type: 0, bytes };
    }
    return { type: bytes[0] ?? 0, bytes };
  }

  private peek(count: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= count) return first;
    const merged = Buffer.concat(this.chunks);
    this.chunks = [merged];
    return merged;
  }

  private take(count: number): Buffer {
    const first = this.chunks[0] as Buffer;
    let out: Buffer;
    if (first.length >= count) {
      out = first.subarray(0, count);
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
    } else {
      const parts: Buffer[] = [];
      let needed = count;
      while (needed > 0) {
        const chunk = this.chunks[0] as Buffer;
        if (chunk.length <= needed) {
          parts.push(chunk);
          this.chunks.shift();
          needed -= chunk.length;
        } else {
          parts.push(chunk.subarray(0, needed));
          this.chunks[0] = chunk.subarray(needed);
          needed = 0;
        }
      }
      out = Buffer.concat(parts, count);
    }
    this.length -= count;
    return out;
  }
}

interface Connection {
  socket: net.Socket;
  reader: MessageReader;
  /** Whole messages not yet handed to PGlite. */
  ready: Message[];
  /** Index in `ready` up to which the messages can be run now (a COPY waits for its end). */
  runnable: number;
  /** A `COPY … FROM STDIN` is waiting for its data; `copyAnnounced` once it got CopyInResponse. */
  inCopy: boolean;
  copyAnnounced: boolean;
  binaryCopy: boolean;
  running: boolean;
  queued: boolean;
  closed: boolean;
}

/**
 * Serves one PGlite over TCP. PGlite is a single Postgres backend, so the connections take turns:
 * each turn hands PGlite every whole message a connection has sent (PGlite needs a
 * `COPY … FROM STDIN` together with all its data in one call, or it aborts), and a connection
 * that is inside a transaction or an unfinished extended-protocol exchange keeps the backend
 * until it is done or disconnects (then it is rolled back).
 *
 * Written instead of @electric-sql/pglite-socket 0.2.17, whose handler passes messages to PGlite
 * one at a time: there `COPY … FROM STDIN` kills the connection ("protocol synchronization was lost").
 */
class WireServer {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  private queue: Connection[] = [];
  private owner: Connection | null = null;
  private pumping: Promise<void> | null = null;

  constructor(
    private readonly db: PGlite,
    maxConnections: number,
  ) {
    this.server = net.createServer((socket) => this.accept(socket));
    this.server.maxConnections = maxConnections;
  }

  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const connection of this.connections) connection.socket.destroy();
    await closed;
    // Let the pump finish the turn in progress and roll back the owner's transaction.
    while (this.pumping) await this.pumping;
  }

  private accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    const connection: Connection = {
      socket,
      reader: new MessageReader(),
      ready: [],
      runnable: 0,
      inCopy: false,
      copyAnnounced: false,
      binaryCopy: false,
      running: false,
      queued: false,
      closed: false,
    };
    this.connections.add(connection);
    socket.on("data", (chunk: Buffer) => this.receive(connection, chunk));
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      connection.closed = true;
      this.connections.delete(connection);
      connection.ready = [];
      connection.runnable = 0;
      // The owner still gets a turn, in which its transaction is rolled back.
      if (this.owner === connection) this.enqueue(connection);
    });
  }

  private receive(connection: Connection, chunk: Buffer): void {
    connection.reader.push(chunk);
    for (;;) {
      let message: Message | null;
      try {
        message = connection.reader.next();
      } catch {
        connection.socket.destroy();
        return;
      }
      if (!message) break;
      if (message.type === 0 && message.bytes.length >= 8) {
        const request = message.bytes.readInt32BE(4);
        if (request === SSL_REQUEST || request === GSSENC_REQUEST) {
          connection.socket.write("N");
          continue;
        }
        if (request === CANCEL_REQUEST) {
          connection.socket.end();
          return;
        }
      }
      if (message.type === TERMINATE) {
        connection.socket.end();
        return;
      }
      connection.ready.push(message);
      const text = message.type === QUERY ? message.bytes.toString("utf8", 5, message.bytes.length - 1) : "";
      if (!connection.inCopy && COPY_FROM_STDIN.test(text)) {
        message.copy = true;
        connection.inCopy = true;
        connection.copyAnnounced = false;
        connection.binaryCopy = COPY_BINARY.test(text);
      } else if (connection.inCopy && (message.type === COPY_DONE || message.type === COPY_FAIL)) {
        connection.inCopy = false;
      }
      if (!connection.inCopy) connection.runnable = connection.ready.length;
    }
    this.announceCopy(connection);
    if (connection.runnable > 0) this.enqueue(connection);
  }

  /**
   * A client sends the data of a `COPY … FROM STDIN` only after the server's CopyInResponse, but
   * PGlite must get the statement and its data in one call. So once everything sent before the
   * COPY has run, the client gets a CopyInResponse from here, and PGlite's own is dropped later.
   * (Were the COPY to fail, PGlite reports the error after the data, which it then ignores.)
   */
  private announceCopy(connection: Connection): void {
    if (!connection.inCopy || connection.copyAnnounced || connection.running || connection.closed) return;
    if (connection.ready[0]?.copy !== true) return;
    connection.copyAnnounced = true;
    // 'G', length 7, overall format (0 text, 1 binary), 0 columns.
    connection.socket.write(Buffer.from([COPY_IN_RESPONSE, 0, 0, 0, 7, connection.binaryCopy ? 1 : 0, 0, 0]));
  }

  private enqueue(connection: Connection): void {
    if (!connection.queued) {
      connection.queued = true;
      this.queue.push(connection);
    }
    this.pumping ??= this.pump().finally(() => {
      this.pumping = null;
    });
  }

  private async pump(): Promise<void> {
    for (;;) {
      // While a connection owns the backend, only it may run; the others keep their place.
      const index = this.owner ? this.queue.indexOf(this.owner) : 0;
      const connection = index >= 0 ? this.queue[index] : undefined;
      if (!connection) return;
      this.queue.splice(index, 1);
      connection.queued = false;
      if (connection.closed) {
        if (this.owner === connection) await this.releaseBackend();
        continue;
      }
      const messages = connection.ready.splice(0, connection.runnable);
      connection.runnable = 0;
      if (messages.length === 0) continue;
      await this.run(connection, messages);
    }
  }

  private async run(connection: Connection, messages: Message[]): Promise<void> {
    const input = Buffer.concat(messages.map((message) => message.bytes));
    const { socket } = connection;
    const send = (data: Buffer) => {
      if (!socket.destroyed && socket.writable) socket.write(data);
    };
    // The CopyInResponses the client already got from announceCopy() are dropped from the output.
    const copies = messages.filter((message) => message.copy === true).length;
    const held: Buffer[] = [];
    connection.running = true;
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(new Uint8Array(input.buffer, input.byteOffset, input.length), {
          onRawData: (data) => {
            if (copies > 0) held.push(Buffer.from(data));
            else send(Buffer.from(data));
          },
        }),
      );
      if (copies > 0) send(dropMessages(Buffer.concat(held), COPY_IN_RESPONSE, copies));
    } catch (error) {
      process.stderr.write(`embedded database: ${(error as Error).message}\n`);
      socket.destroy();
    } finally {
      connection.running = false;
    }
    const last = messages[messages.length - 1]?.type;
    const settled = last === SYNC || last === QUERY || last === COPY_DONE || last === COPY_FAIL || last === 0;
    this.owner = !settled || this.db.isInTransaction() ? connection : null;
    // A client that vanished during its turn (its close handler saw no owner) is cleaned up here.
    if (connection.closed && this.owner === connection) await this.releaseBackend();
    this.announceCopy(connection);
  }

  /** Ends what a vanished owner left open: an extended-protocol exchange, then a transaction. */
  private async releaseBackend(): Promise<void> {
    this.owner = null;
    if (this.db.closed) return;
    const discard = { onRawData: () => undefined };
    const sync = Buffer.from([SYNC, 0, 0, 0, 4]);
    await this.db.runExclusive(async () => {
      await this.db.execProtocolRawStream(new Uint8Array(sync), discard);
      if (this.db.isInTransaction()) {
        const text = Buffer.from("ROLLBACK\0");
        const query = Buffer.alloc(5);
        query.writeUInt8(QUERY, 0);
        query.writeInt32BE(4 + text.length, 1);
        await this.db.execProtocolRawStream(new Uint8Array(Buffer.concat([query, text])), discard);
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// One process per data directory
// ---------------------------------------------------------------------------------------------

function lockPath(dataDir: string): string {
  return `${dataDir.replace(/[/\\]+$/, "")}.lock`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readLock(file: string): Promise<Partial<EmbeddedLock> | null> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as Partial<EmbeddedLock>;
  } catch {
    return null;
  }
}

/**
 * The embedded database that another live process (typically `npm run dev`) is serving from
 * `dataDir`, or null. PGlite cannot safely open a data directory twice, so scripts connect to it.
 */
export async function findRunningEmbeddedDatabase(dataDir = DEFAULT_DATA_DIR): Promise<EmbeddedLock | null> {
  const lock = await readLock(lockPath(path.resolve(dataDir)));
  if (!lock || typeof lock.pid !== "number" || typeof lock.url !== "string" || lock.url === "") return null;
  if (lock.pid === process.pid || !isAlive(lock.pid)) return null;
  return { pid: lock.pid, url: lock.url, dataDir: lock.dataDir ?? path.resolve(dataDir) };
}

/** Takes the lock on a data directory (or throws when a live process holds it). */
async function acquireLock(dataDir: string): Promise<(url: string) => Promise<void>> {
  const file = lockPath(dataDir);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(file, JSON.stringify({ pid: process.pid, url: "", dataDir }), { flag: "wx" });
      return (url) => writeFile(file, `${JSON.stringify({ pid: process.pid, url, dataDir })}\n`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = (await readLock(file))?.pid;
    if (typeof holder === "number" && isAlive(holder)) {
      throw new Error(
        `the embedded database in ${dataDir} is in use by process ${holder} (npm run dev?); ` +
          "stop that process, or set DATABASE_URL to the URL it serves",
      );
    }
    await rm(file, { force: true });
  }
  throw new Error(`could not lock the embedded database in ${dataDir} (${file})`);
}

// ---------------------------------------------------------------------------------------------

/**
 * Starts PGlite (Postgres 18 compiled to WASM), persisted in `dataDir`, and serves it over the
 * Postgres wire protocol on 127.0.0.1 so `pg`, drizzle's migrator, `COPY … FROM STDIN` and the
 * Neon driver (through the relay) can all use it.
 *
 * All connections share one Postgres session: session state (`SET`, temporary tables, named
 * prepared statements) is visible to the others, so prefer `SET LOCAL` inside transactions.
 * Statements run one at a time, and a connection that sits in an open transaction holds up the rest.
 */
export async function startEmbeddedDatabase(
  options: EmbeddedDatabaseOptions = {},
): Promise<EmbeddedDatabase> {
  const requested = options.dataDir ?? DEFAULT_DATA_DIR;
  const inMemory = requested.startsWith(IN_MEMORY);
  const dataDir = inMemory ? requested : path.resolve(requested);
  const lockFile = lockPath(dataDir);

  let publishUrl: ((url: string) => Promise<void>) | undefined;
  if (!inMemory) {
    await mkdir(path.dirname(dataDir), { recursive: true });
    publishUrl = await acquireLock(dataDir);
  }

  let db: PGlite | undefined;
  let server: WireServer | undefined;
  try {
    db = await PGlite.create(inMemory ? {} : { dataDir });
    server = new WireServer(db, options.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
    const port = await server.listen(options.port ?? 0);
    const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
    await publishUrl?.(url);

    const openDb = db;
    const openServer = server;
    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        try {
          await openServer.close();
          if (!openDb.closed) await openDb.close();
        } finally {
          if (!inMemory) await rm(lockFile, { force: true });
        }
      })();
      return closing;
    };
    return { url, port, close };
  } catch (error) {
    await server?.close().catch(() => undefined);
    if (db && !db.closed) await db.close().catch(() => undefined);
    if (!inMemory) await rm(lockFile, { force: true });
    throw error;
  }
}
